// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_cxx: C++ names for the demangler. A std::thread named "cxxspin" burns
 * CPU for SECONDS in
 *	symcxx::run_worker() -> symcxx::Spinner::spin() -> symcxx::detail::mix()
 * (a namespace function, a class method, a function of a nested
 * namespace, all noinline), then exits. Their mangled names are
 * _ZN6symcxx10run_workerEd, _ZN6symcxx7Spinner4spinEm and
 * _ZN6symcxx6detail3mixEm; the thread's entry runs through libstdc++'s
 * std::thread::_State_impl<...>::_M_run, a long template name.
 *
 *	sym_cxx [SECONDS]
 *
 * Prints "ready PID TID" once the worker runs.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace symcxx
{
namespace detail
{
__attribute__((noinline)) uint64_t mix(uint64_t v)
{
	volatile uint64_t acc = v;

	for (int i = 0; i < 100000; i++)
		acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
	return acc;
}
} // namespace detail

class Spinner {
public:
	explicit Spinner(uint64_t seed) : acc_(seed)
	{
	}

	__attribute__((noinline)) uint64_t spin(uint64_t rounds);

private:
	uint64_t acc_;
};

uint64_t Spinner::spin(uint64_t rounds)
{
	for (uint64_t i = 0; i < rounds; i++)
		acc_ = detail::mix(acc_);
	return acc_;
}

__attribute__((noinline)) void run_worker(double seconds)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	Spinner s(42);

	pthread_setname_np(pthread_self(), "cxxspin");
	std::printf("ready %d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	std::fflush(stdout);
	while (std::chrono::steady_clock::now() < end)
		s.spin(10);
}
} // namespace symcxx

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 3;

	if (argc > 2 || seconds <= 0) {
		std::fprintf(stderr, "usage: sym_cxx [SECONDS]\n");
		return 2;
	}
	std::thread t(symcxx::run_worker, seconds);
	t.join();
	return 0;
}
