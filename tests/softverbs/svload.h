/* SPDX-License-Identifier: MIT */
/*
 * Loads a verbs library the way the JACCL runtime does: dlopen of the file
 * named by JACCL_IBVERBS_LIB (else SOFTVERBS_LIB, else the softverbs build
 * under $top_builddir) and dlsym of the entry points it uses. The data path
 * (ibv_post_send, ibv_post_recv, ibv_poll_cq) is the inline code of
 * <infiniband/verbs.h>, which calls through the context's ops table.
 * Header-only, for the softverbs test programs.
 */
#ifndef SVLOAD_H
#define SVLOAD_H

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct svl {
	void			*handle;
	struct ibv_device	**(*get_device_list)(int *);
	void			(*free_device_list)(struct ibv_device **);
	const char		*(*get_device_name)(struct ibv_device *);
	struct ibv_context	*(*open_device)(struct ibv_device *);
	int			(*close_device)(struct ibv_context *);
	int			(*query_device)(struct ibv_context *,
				    struct ibv_device_attr *);
	int			(*query_port)(struct ibv_context *, uint8_t,
				    struct ibv_port_attr *);
	int			(*query_gid)(struct ibv_context *, uint8_t, int,
				    union ibv_gid *);
	struct ibv_pd		*(*alloc_pd)(struct ibv_context *);
	int			(*dealloc_pd)(struct ibv_pd *);
	struct ibv_cq		*(*create_cq)(struct ibv_context *, int, void *,
				    struct ibv_comp_channel *, int);
	int			(*destroy_cq)(struct ibv_cq *);
	struct ibv_qp		*(*create_qp)(struct ibv_pd *,
				    struct ibv_qp_init_attr *);
	int			(*destroy_qp)(struct ibv_qp *);
	int			(*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *,
				    int);
	struct ibv_mr		*(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int			(*dereg_mr)(struct ibv_mr *);
};

/* Returns the library path to load; static buffer, not reentrant. */
static const char *
svl_path(void)
{
	static char buf[4096];
	const char *p = getenv("JACCL_IBVERBS_LIB");

	if (p == NULL || *p == '\0')
		p = getenv("SOFTVERBS_LIB");
	if (p != NULL && *p != '\0')
		return p;
	p = getenv("top_builddir");
	snprintf(buf, sizeof(buf), "%s/tests/softverbs/.libs/libsoftverbs.so",
	    p != NULL ? p : ".");
	return buf;
}

#define SVL_SYM(s, name) do {						\
	*(void **)(&(s)->name) = dlsym((s)->handle, "ibv_" #name);	\
	if ((s)->name == NULL) {					\
		snprintf(err, errlen, "%s", dlerror());			\
		dlclose((s)->handle);					\
		return -1;						\
	}								\
} while (0)

/* Fills *s; returns 0, or -1 with the reason in err. */
static int
svl_open(struct svl *s, char *err, size_t errlen)
{
	if ((s->handle = dlopen(svl_path(), RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errlen, "%s", dlerror());
		return -1;
	}
	SVL_SYM(s, get_device_list);
	SVL_SYM(s, free_device_list);
	SVL_SYM(s, get_device_name);
	SVL_SYM(s, open_device);
	SVL_SYM(s, close_device);
	SVL_SYM(s, query_device);
	SVL_SYM(s, query_port);
	SVL_SYM(s, query_gid);
	SVL_SYM(s, alloc_pd);
	SVL_SYM(s, dealloc_pd);
	SVL_SYM(s, create_cq);
	SVL_SYM(s, destroy_cq);
	SVL_SYM(s, create_qp);
	SVL_SYM(s, destroy_qp);
	SVL_SYM(s, modify_qp);
	SVL_SYM(s, reg_mr);
	SVL_SYM(s, dereg_mr);
	return 0;
}

/* Opens the device called name; NULL if there is none. */
static __attribute__((unused)) struct ibv_context *
svl_open_by_name(struct svl *s, const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n = 0;

	if ((list = s->get_device_list(&n)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *dn = s->get_device_name(list[i]);

		if (dn != NULL && strcmp(dn, name) == 0) {
			ctx = s->open_device(list[i]);
			break;
		}
	}
	s->free_device_list(list);
	return ctx;
}

#endif
