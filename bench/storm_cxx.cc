// storm_cxx.cc - a C++ program that allocates fast with new/delete (the
// allocation-storm benchmark's second program, bench/storm.sh).
//
// Per round: 400 small objects (48 bytes: a message with a std::string
// header that fits the small-string buffer) made with new and deleted
// soon after, one kept in a ring of 8,192 (live at the end), and random
// reads of one planted hot table (16 MiB, made first with new[]).
// Expected: the hot table is the first object.
//
// Usage: storm_cxx [ROUNDS [HOT_READS]]   (defaults 50000, 64)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Msg {
	std::string tag; // short: no allocation of its own
	uint64_t seq;
	uint64_t sum;
};

constexpr int kTemp = 400;
constexpr int kKept = 8192;
constexpr uint64_t kHotWords = (16u << 20) / 8;

__attribute__((noinline)) uint64_t *make_hot()
{
	uint64_t *t = new uint64_t[kHotWords];

	for (uint64_t i = 0; i < kHotWords; i++)
		t[i] = (i * 2654435761u + 12345) & (kHotWords - 1);
	return t;
}

__attribute__((noinline)) Msg *make_temp(uint64_t k)
{
	return new Msg{ "tmp", k, 0 };
}

__attribute__((noinline)) Msg *make_kept(uint64_t k)
{
	return new Msg{ "kept", k, k * 3 };
}

__attribute__((noinline)) uint64_t churn(uint64_t seed)
{
	Msg *batch[16];
	uint64_t sum = 0;

	for (int k = 0; k < kTemp; k += 16) {
		for (int j = 0; j < 16; j++)
			batch[j] = make_temp(seed + (uint64_t)(k + j));
		for (int j = 0; j < 16; j++) {
			sum += batch[j]->seq + batch[j]->tag.size();
			delete batch[j];
		}
	}
	return sum;
}

__attribute__((noinline)) uint64_t read_hot(const uint64_t *hot, long reads, uint64_t *at)
{
	uint64_t i = *at, sum = 0;

	for (long k = 0; k < reads; k++) {
		const uint64_t *w = hot + i;

		i = *w;
		sum += (uint64_t)(uintptr_t)w ^ i;
	}
	*at = i;
	return sum;
}

} // namespace

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 50000;
	long reads = argc > 2 ? std::atol(argv[2]) : 64;
	uint64_t *hot = make_hot(), sum = 0, at = 0;
	Msg **kept = new Msg *[kKept]();

	for (long r = 0; r < rounds; r++) {
		Msg *m = make_kept((uint64_t)r);

		delete kept[r % kKept];
		kept[r % kKept] = m;
		sum += churn((uint64_t)r);
		sum += read_hot(hot, reads, &at);
	}
	std::printf("storm_cxx: %ld rounds, checksum %llu\n", rounds, (unsigned long long)sum);
	return 0;
}
