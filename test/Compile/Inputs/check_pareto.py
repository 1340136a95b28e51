"""Checks `loom plan --pareto --json`: the front is not empty, sorted by
tokens/s per user (highest first), and no point of it is at least as good
as another on both axes (tokens/s per user and per chip); every plan
listed is either on it or dominated by a point of it."""
import json
import sys

j = json.load(open(sys.argv[1]))
front = j["pareto_front"]
if not front:
    sys.exit("check_pareto: empty front")
def point(p):
    return p["tokens_per_s_per_user"], p["tokens_per_s_per_chip"]
for a, b in zip(front, front[1:]):
    (ua, ca), (ub, cb) = point(a), point(b)
    if not (ua > ub and ca < cb):
        sys.exit("check_pareto: %s then %s is not a front sorted by tokens/s per user" % (point(a), point(b)))
for p in j["plans"]:
    u, c = point(p)
    if not any(fu >= u * (1 - 1e-9) and fc >= c * (1 - 1e-9) for fu, fc in map(point, front)):
        sys.exit("check_pareto: plan %s is above the front" % (point(p),))
for p in front:
    if abs(p["tokens_per_s"] / p["chips"] - p["tokens_per_s_per_chip"]) > 1e-6 * p["tokens_per_s_per_chip"]:
        sys.exit("check_pareto: tokens_per_s_per_chip is not tokens_per_s / chips")
print("pareto front ok: %d points" % len(front))
