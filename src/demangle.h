/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Readable names for mangled symbols, shown the way perf shows them by
 * default:
 *   C++ (Itanium ABI, "_Z..."): qualified name without return type,
 *       parameter list or cv-qualifiers ("ns::Klass::method");
 *   Rust legacy ("_ZN...17h<16 hex>E"): the path without the "::h<hash>";
 *   Rust v0 ("_R..."): the path without crate disambiguators.
 * A compiler's clone suffix (".constprop.0", ".cold") is kept, as on C
 * names; LLVM's ".llvm.<digits>" (ThinLTO promotion) is dropped.
 *
 * C++ goes through __cxa_demangle() of libstdc++.so.6, opened with dlopen()
 * on first use: wprof links no C++ runtime, and where there is none, C++
 * names just stay mangled. Rust is demangled here.
 */
#ifndef WPROF_DEMANGLE_H
#define WPROF_DEMANGLE_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The demangled form of the symbol @name, malloc'd; NULL with errno EINVAL
 * when @name is not mangled or cannot be demangled (use it as is), ENOMEM.
 */
char *demangle__name(const char *name);

/*
 * The parts, for tests. Each returns a malloc'd string or NULL (errno set).
 * demangle__cxx_strip(): @full as __cxa_demangle() prints it
 * ("void ns::f<int>(int) const") cut down to the name ("ns::f<int>").
 */
char *demangle__cxx_strip(const char *full);
char *demangle__rust_legacy(const char *name);
char *demangle__rust_v0(const char *name);

/* Write code point @cp as UTF-8 (1 to 4 bytes) at @dst; returns the length. */
size_t demangle__utf8(char *dst, __u32 cp);

#endif /* WPROF_DEMANGLE_H */
