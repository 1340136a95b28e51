//===- Queueing.cpp - The queues of the server scenario -------------------===//
//
// Erlang's C formula and the waits of Poisson arrivals: for a free batch
// slot (M/M/c), behind other prompts' prefill (M/D/1), and the percentile
// of a request's time per output token with the prefills interleaved in
// its decode. See Planner.h and docs/planner.md.
//
//===----------------------------------------------------------------------===//
#include "loom/Planner/Planner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace loom::plan {

namespace {
/// x with erfc(x) = y, 0 < y < 2 (bisection: erfc falls monotonically).
double inverseErfc(double y) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    (std::erfc(mid) > y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}
} // namespace

namespace {
/// Erlang's C for c servers offered a erlangs (M/M/c), or 0 as soon as it
/// is known to be at most `below` (0: never). Up to 4,096 servers, Erlang's
/// B is the ratio of the Poisson(a) term at n = floor(c) to the sum of
/// those up to it, 1 / B = sum_j prod_{i<j} (n - i) / a: summed from j = 0
/// its terms grow while n - j > a and then fall off like a Gaussian of
/// width sqrt(a), so the sum stops once they are below 2^-60 of it (about
/// n - a + 9 sqrt(a) terms, not n), or once it shows C <= c B / (c - a) <=
/// `below`.
double erlangCAtMost(double c, double a, double below) {
  const int64_t n = static_cast<int64_t>(c);
  if (n < 1 || a <= 0)
    return 0;
  if (a >= c)
    return 1;
  if (n > 4096) {
    // Past 4,096 servers the sum's terms (O(c) at light load), repeated in
    // every bisection, are what a search would spend its time on: the
    // Halfin-Whitt limit, 1 / (1 + beta Phi(beta) / phi(beta)), beta =
    // (c - a) / sqrt(a), within 5% of Erlang's C wherever C > 1%
    // (PlannerTest); an arrival's wait then moves by less, with its
    // logarithm.
    const double beta = (c - a) / std::sqrt(a);
    const double Phi = 0.5 * std::erfc(-beta / std::sqrt(2.0));
    const double phi = std::exp(-beta * beta / 2) / std::sqrt(2 * M_PI);
    return phi > 0 ? 1 / (1 + beta * Phi / phi) : 0;
  }
  const double stop = below > 0 ? c / ((c - a) * below) : HUGE_VAL;
  double sum = 1, term = 1;
  for (int64_t j = 1; j <= n; ++j) {
    term *= double(n - j + 1) / a;
    sum += term;
    if (sum >= stop || sum > 1e300)
      return 0;
    if (double(n - j) <= a && term < sum * 0x1p-60)
      break;
  }
  const double b = 1 / sum;
  return c * b / (c - a * (1 - b));
}
} // namespace

double erlangC(double c, double a) { return erlangCAtMost(c, a, 0); }

double prefillWait(double service, double rate, double tail) {
  // M/D/1: an arrival waits with probability rho = rate x service, and the
  // wait's tail is C exp(-theta t) (Cramer-Lundberg), theta the positive
  // root of rate (exp(theta service) - 1) = theta and
  // C = (1 - rho) / (rho exp(theta service) - 1); the time it exceeds
  // with probability `tail`.
  const double rho = rate * service;
  if (rho >= 1)
    return std::numeric_limits<double>::infinity();
  if (rho <= tail || service <= 0)
    return 0;
  auto f = [&](double th) { return rate * std::expm1(th * service) - th; };
  // f < 0 just above 0 (rho < 1), convex, and grows without bound: from a
  // point where f >= 0, Newton's steps fall monotonically onto the root.
  double hi = 1.0 / service;
  while (f(hi) < 0)
    hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double slope = rate * service * std::exp(hi * service) - 1;
    const double next = hi - f(hi) / slope;
    if (!(next < hi) || hi - next <= hi * 0x1p-50)
      break;
    hi = next;
  }
  const double constant = (1 - rho) / (rho * std::exp(hi * service) - 1);
  return std::max(0.0, std::log(constant / tail) / hi);
}

double slotWait(double c, double hold, double rate, double tail) {
  // P(wait > t) = C(c, a) exp(-(c - a) t / hold), a = rate x hold.
  const double a = rate * hold;
  if (a >= c)
    return std::numeric_limits<double>::infinity();
  const double waits = erlangCAtMost(c, a, tail);
  if (waits <= tail)
    return 0;
  return hold / (c - a) * std::log(waits / tail);
}

double tpotPercentile(double step, double prefill, double rate,
                      double output, double tail) {
  // N, the prefills interleaved in the request's decode: the arrivals
  // during its own work x = output x step, plus those during their
  // prefills, and so on (a Galton-Watson tree with Poisson(rho) offspring,
  // rho = rate x prefill, from Poisson(a) roots, a = rate x x). Its law is
  // the generalized Borel-Tanner one, P(N = n) = a / (a + rho n)
  // exp(-(a + rho n)) (a + rho n)^n / n!, its cumulants a / (1 - rho),
  // a / (1 - rho)^3 and a (1 + 2 rho) / (1 - rho)^5. Its mean gives
  // step / (1 - rho), the mean TPOT.
  const double rho = rate * prefill;
  if (rho >= 1)
    return std::numeric_limits<double>::infinity();
  const double a = rate * output * step;
  if (rho <= 0 || a <= 0 || output <= 0)
    return step;
  // Fewer than 20 arrivals, or fewer than 100 near saturation (rho >
  // 0.85): the law summed to the quantile, where the expansion below is
  // off by up to 29% (and by orders of magnitude with a handful of
  // arrivals near saturation). The sum stops at 20,000 terms (a < 100
  // reaches its quantile before that up to rho = 0.98); past them the
  // expansion serves, an overestimate there.
  if (a < 20 || (a < 100 && rho > 0.85)) {
    double cdf = 0;
    for (double n = 0; n < 2e4; n += 1) {
      const double mean = a + rho * n;
      cdf += std::exp(std::log(a / mean) - mean + n * std::log(mean) -
                      std::lgamma(n + 1));
      if (cdf >= 1 - tail)
        return step + n * prefill / output;
    }
  }
  // Else the Cornish-Fisher expansion to the skewness: within 2% of the
  // summed quantile from a = 20 up to rho = 0.85, and from a = 100 within
  // 1.2% up to rho = 0.95 (4.6% at 0.98), closer with more arrivals
  // (PlannerTest). The normal quantile is kept for the
  // next call (the same tail).
  thread_local double lastTail = -1, z = 0;
  if (tail != lastTail) {
    lastTail = tail;
    z = std::sqrt(2.0) * inverseErfc(2 * tail);
  }
  const double sd = std::sqrt(a / std::pow(1 - rho, 3));
  const double skew = a * (1 + 2 * rho) / std::pow(1 - rho, 5) / (sd * sd * sd);
  const double n =
      std::max(0.0, a / (1 - rho) + sd * (z + (z * z - 1) * skew / 6));
  return step + n * prefill / output;
}

} // namespace loom::plan
