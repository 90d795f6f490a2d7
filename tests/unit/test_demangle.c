// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/demangle.c and src/demangle_v0.c: C++ names cut the
 * way perf (libiberty without DMGL_PARAMS, i.e. `c++filt -p`) prints them,
 * Rust names the way rustc-demangle's alternate form does. The expected
 * strings were checked against c++filt; Rust ones are names rustc 1.95
 * gave real functions. Then the C++ fixture wpcxx, run as a child, is
 * symbolized end to end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demangle.h"
#include "symbolize.h"
#include "unit.h"
#include "../fixtures/fixchild.h"

struct pair {
	const char *in, *want; /* want NULL: not demangled, errno EINVAL */
};

static void check_pairs(const char *test, char *(*fn)(const char *), const struct pair *p,
			size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		char details[2048];
		char *got;
		bool ok;

		errno = 0;
		got = fn(p[i].in);
		ok = p[i].want ? got && !strcmp(got, p[i].want) : !got && errno == EINVAL;
		snprintf(details, sizeof(details), "got \"%s\" (errno %d)", got ? got : "(null)",
			 errno);
		unit_report(ok, test, details, "%.120s -> %.150s", p[i].in,
			    p[i].want ? p[i].want : "(not demangled)");
		free(got);
	}
}

#define CHECK_PAIRS(fn, pairs) check_pairs(__func__, fn, pairs, sizeof(pairs) / sizeof(pairs[0]))

static void test_cxx_strip(void)
{
	static const struct pair pairs[] = {
		{ "ns::Klass::method(int) const", "ns::Klass::method" },
		{ "void ns::f<int>(int)", "ns::f<int>" },
		{ "ns::f(int)::{lambda()#1}::operator()() const",
		  "ns::f(int)::{lambda()#1}::operator()" },
		{ "std::vector<int, std::allocator<int> >::size() const",
		  "std::vector<int, std::allocator<int> >::size" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
		  "char const*)",
		  "std::operator<< <std::char_traits<char> >" },
		{ "(anonymous namespace)::foo()", "(anonymous namespace)::foo" },
		{ "A::operator int() const", "A::operator int" },
		{ "A::operator new(unsigned long)", "A::operator new" },
		{ "A::operator delete[](void*)", "A::operator delete[]" },
		{ "A::operator<(A const&)", "A::operator<" },
		{ "A::operator<=>(A const&)", "A::operator<=>" },
		{ "A::operator>>=(int)", "A::operator>>=" },
		{ "A::~A()", "A::~A" },
		{ "decltype (bar({parm#1})) foo<int>(int)", "foo<int>" },
		{ "void (*ns::getfn(int))(int)", "ns::getfn" },
		{ "unsigned long ns::f<unsigned long>(unsigned long) &&", "ns::f<unsigned long>" },
		{ "std::__cxx11::basic_string<char>::_M_create[abi:cxx11](unsigned long&)",
		  "std::__cxx11::basic_string<char>::_M_create[abi:cxx11]" },
		{ "non-virtual thunk to B::f()", "non-virtual thunk to B::f()" },
		{ "guard variable for ns::f()::x", "guard variable for ns::f()::x" },
		{ "ns::variable", "ns::variable" },
	};

	CHECK_PAIRS(demangle__cxx_strip, pairs);
}

/* Through __cxa_demangle() of libstdc++, opened at run time. */
static void test_cxx(void)
{
	static const struct pair pairs[] = {
		{ "_ZN2ns5Klass6methodEi", "ns::Klass::method" },
		{ "_ZNK2ns5Klass6methodEi", "ns::Klass::method" },
		{ "_ZN2ns1fIiEEvT_", "ns::f<int>" },
		{ "_ZZN2ns1fEiENKUlvE_clEv", "ns::f(int)::{lambda()#1}::operator()" },
		{ "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		  "std::operator<< <std::char_traits<char> >" },
		{ "_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo" },
		{ "_ZN2ns1fEv.constprop.0", "ns::f.constprop.0" },
		{ "_ZN2ns1fEv.isra.0.cold", "ns::f.isra.0.cold" },
		{ "_ZN2ns1fEv.llvm.8123456", "ns::f" },
		{ "_ZThn8_N1B1fEv", "non-virtual thunk to B::f()" },
		{ "_ZTV1B", "vtable for B" },
		{ "_ZN3foo3barE", "foo::bar" }, /* no Rust hash: C++ */
		{ "_Z", NULL },
		{ "_Zjunk", NULL },
		{ "main", NULL },
		{ "", NULL },
	};

	CHECK_PAIRS(demangle__name, pairs);
}

static void test_rust_legacy(void)
{
	static const struct pair pairs[] = {
		{ "_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", "core::fmt::Formatter::pad" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
		  "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_ZN1m12Foo$LT$T$GT$6method17h94a1121ef37ac3aaE", "m::Foo<T>::method" },
		{ "_ZN1u24_$ufc$n$uef$c$uf8$d$ue9$17h32c634f0dd4340cdE", "u::ünïcødé" },
		{ "_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$"
		  "17h7fd6e99ee3b22487E",
		  "core::ops::function::FnOnce::call_once{{vtable.shim}}" },
		{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h1a2b3c4d5e6f7a8bE",
		  "<&T as core::fmt::Debug>::fmt" },
		{ "_ZN3foo3bar17h0123456789abcdefE.llvm.4242", "foo::bar" },
		{ "_ZN3foo3barE", NULL },			     /* no hash: C++ */
		{ "_ZN3foo3bar17hxyz3456789abcdefE", NULL },	     /* not a hash */
		{ "_ZN3foo5$XX$y17h0123456789abcdefE", NULL },	     /* unknown escape */
		{ "_ZN3foo9bar17h0123456789abcdefE", NULL },	     /* lengths overrun */
		{ "_ZN2ns5Klass6methodEi", NULL },
	};

	CHECK_PAIRS(demangle__rust_legacy, pairs);
}

static const struct pair v0_pairs[] = {
	{ "_RNvCsayYDP3hoOQQ_1u4main", "u::main" },
	{ "_RNvCsayYDP3hoOQQ_1uu13ncd_dma1a9cya", "u::ünïcødé" },
	{ "_RNvMCsayYDP3hoOQQ_1uNtB2_1P3get", "<u::P>::get" },
	{ "_RNvXs_CskK7mfDs1mzF_1mINtB4_3FoohENtNtCsgEmfK2I1SDS_4core3fmt7Display3fmtB4_",
	  "<m::Foo<u8> as core::fmt::Display>::fmt" },
	{ "_RNvMCskK7mfDs1mzF_1mINtB2_3FooReE6methodB2_", "<m::Foo<&str>>::method" },
	{ "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0CsayYDP3hoOQQ_1u",
	  "std::rt::lang_start::<()>::{closure#0}" },
	{ "_RNSNvYNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0INtNtNtCsgEmfK2I1SDS_4core3ops8fun"
	  "ction6FnOnceuE9call_once6vtableCsayYDP3hoOQQ_1u",
	  "<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::"
	  "{shim:vtable#0}" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace28___rust_begin_short_backtraceFEuuECsayYDP3h"
	  "oOQQ_1u",
	  "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_I"
	  "NtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6Ou"
	  "tputuNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<"
	  "(&'a std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + "
	  "core::marker::Send>>" },
	{ "_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
	  "core::escape::escape_unicode::<10>" },
	{ "_RINvCs1234_1a1fKb1_Kc4a_Kan1_Kj0_KpE", "a::f::<true, 'J', -1, 0, _>" },
	{ "_RINvCs1234_1a1fAhj3_SmTlhEFUKCmEuPOdE",
	  "a::f::<[u8; 3], [u32], (i32, u8), unsafe extern \"C\" fn(u32), *const *mut f64>" },
	{ "_RINvCs1234_1a1fRL_hQeE", "a::f::<&u8, &mut str>" },
	{ "_RINvCs1234_1a1fFG0_RL0_hEuE", "a::f::<for<'a, 'b> fn(&'b u8)>" },
	{ "_RINvCs1234_1a1fTmEDNtCs1_4core4SendEL_E", "a::f::<(u32,), dyn core::Send>" },
	{ "_RINvCs1234_1a1fKVNtCs1_1b1SS1xj1_1yb0_EKVNtCs1_1b1TTj2_EKVNtCs1_1b1UUKRe616263_KAj1_"
	  "j2_EKTj1_EE",
	  "a::f::<b::S { x: 1, y: false }, b::T(2), b::U, \"abc\", [1, 2], (1,)>" },
	{ "_RINvCs1234_1a1fFK13system_unwindEuE", "a::f::<extern \"system-unwind\" fn()>" },
	{ "_RNvCs1234_1a1f.llvm.99", "a::f" },
	{ "_RNvCs1234_1a1f.cold", "a::f.cold" },
	{ "_RB_", NULL },      /* a back-reference to itself */
	{ "_RNvC", NULL },     /* truncated */
	{ "_RNvCs1_1a1fX", NULL }, /* junk after the path */
	{ "_R1NvCs1_1a1f", NULL }, /* unknown encoding version */
	{ "_Rfoo", NULL },
	{ "_ZN3foo3barE", NULL },
};

static void test_rust_v0(void)
{
	CHECK_PAIRS(demangle__rust_v0, v0_pairs);
}

/* Every prefix and single-byte change of valid names: rejected or demangled, never a crash. */
static void test_rust_v0_garbage(void)
{
	static const char subst[] = "_0AZazBCEGIKLMNRQSTUVXYpsu.$";
	char buf[512];
	size_t i, j, k, runs = 0;

	for (i = 0; i < sizeof(v0_pairs) / sizeof(v0_pairs[0]); i++) {
		size_t len = strlen(v0_pairs[i].in);

		if (len >= sizeof(buf))
			continue;
		for (j = 2; j <= len; j++) {
			memcpy(buf, v0_pairs[i].in, j);
			buf[j] = '\0';
			free(demangle__rust_v0(buf));
			runs++;
			for (k = 0; k < sizeof(subst) - 1 && j < len; k++) {
				strcpy(buf, v0_pairs[i].in);
				buf[j] = subst[k];
				free(demangle__rust_v0(buf));
				runs++;
			}
		}
	}
	CHECK(runs > 1000, "%zu mangled names mangled further, none crashed", runs);
}

static void test_cxx_fixture(void)
{
	static const struct {
		const char *label, *want;
	} funcs[] = {
		{ "method", "ns::Klass::method" },    { "call", "ns::Klass::operator()" },
		{ "stat", "ns::Klass::stat" },	      { "twice", "ns::twice<int>" },
		{ "inl", "ns::Klass::inl_caller" },   { "hidden", "(anonymous namespace)::hidden" },
	};
	struct symbolizer *s = symbolizer__new();
	struct child c = {};
	char exe[600], what[128];
	size_t i;

	snprintf(exe, sizeof(exe), "%s/wpcxx", fixture_dir);
	if (!CHECK(s && child_start(&c, (char *[]){ exe, NULL }) == 0, "C++ fixture %s runs", exe))
		goto out;
	CHECK_EQ_S64(symbolizer__add_pid(s, c.pid), 0, "add_pid");
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		snprintf(what, sizeof(what), "C++ %s", funcs[i].label);
		check_name(s, c.pid, child_addr(&c, funcs[i].label) - 1, funcs[i].want, what);
	}
	check_frames(s, c.pid, child_addr(&c, "inl") - 1, 8,
		     "ns::Klass::inl_caller;ns::Klass::inl_helper_[i]",
		     "inlined method named by its qualified linkage name");
	child_stop(&c);
	check_name(s, c.pid, child_addr(&c, "method") - 1, "ns::Klass::method", "C++, exited");
out:
	child_stop(&c);
	symbolizer__free(s);
}

int main(void)
{
	alarm(60);
	fix_init();
	test_cxx_strip();
	test_cxx();
	test_rust_legacy();
	test_rust_v0();
	test_rust_v0_garbage();
	test_cxx_fixture();
	return unit_done();
}
