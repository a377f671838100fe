/* SPDX-License-Identifier: MIT */
/*
 * xxHash for sync, through the library's dispatch to the widest vector
 * unit the CPU has where the library carries one (x86: AVX2, AVX-512);
 * elsewhere its own build (NEON on Apple silicon).
 */
#ifndef JC_XXH_H
#define JC_XXH_H

#include <xxhash.h>
#if defined(HAVE_XXH_X86DISPATCH_H) && defined(HAVE_XXH3_128BITS_DISPATCH)
#include <xxh_x86dispatch.h>
#endif

#endif
