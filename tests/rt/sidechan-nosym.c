/* SPDX-License-Identifier: MIT */
/* A shared object without the side channel symbol, for the loader's error. */
int rt_nosym_placeholder(void);

int
rt_nosym_placeholder(void)
{
	return 0;
}
