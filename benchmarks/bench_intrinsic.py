"""Intrinsic metrics: per-point cost of the summaries and the cluster report, the block update
against a numpy floor, and recomputing with scikit-learn — CPU ratios and instruction counts.

1. **Per point** (CPU time, one process): ``ClusterSummaries.update`` (native kernel), the same
   with the Python reference (``native=False``), a per-point numpy Welford loop (the floor a
   hand-written streaming loop reaches), and ``ClusterReport`` update + get (7 intrinsic metrics:
   SSW, SSB, Calinski-Harabasz, separation, RMS compactness and Davies-Bouldin, prequential
   squared-Euclidean silhouette), the same in one call (``ClusterReport.update_get``: the update
   and the read in one native call), at d = 2…128 and k = 10, 1,000; beside them the floor of the
   report's exact work, one distance row (``_native.RowPass``: the squared distances from the
   point's cluster mean to the k means, one pass over the k × d doubles by the widest kernel the
   CPU has, one call per point). The stream: Gaussian blobs, the k
   clusters seeded first, then M points timed.
2. **Instructions per point** from ``valgrind --tool=callgrind`` (stable on a loaded machine) for
   the same cases on the same grid (d = 2…128, k = 10, 1,000): only each measured loop is
   collected (``functools.reduce``; one process per grid point, one dump per case, through
   ``benchmarks/instructions.py``). Skipped when valgrind is absent.
3. **Blocks**: ``ClusterSummaries.update_many`` of 10⁵ points against the numpy floor of the same
   grouping, per-cluster counts and sums (the faster of ``np.add.at`` and one ``np.bincount`` per
   dimension); beside the CPU times, callgrind's instructions per row of both (the floor's by
   ``np.bincount`` per dimension). ``--only-blocks`` reruns this section alone and rewrites only
   its table (and the load it ran under) in the existing page.
4. **Peer**: recomputing scikit-learn's ``calinski_harabasz_score`` + ``davies_bouldin_score`` +
   ``silhouette_score(metric="sqeuclidean")`` over the N points seen (what a per-point refresh
   costs without streaming summaries; best of 3).

Run:  PYTHONPATH=. python benchmarks/bench_intrinsic.py            (a few minutes)
      PYTHONPATH=. python benchmarks/bench_intrinsic.py --quick    (seconds; smoke test)
      PYTHONPATH=. python benchmarks/bench_intrinsic.py --only-blocks   (the blocks section alone)
Writes docs/benchmarks/intrinsic.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import streameval as se

OUT = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "intrinsic.md"
CASES = ("loop", "summaries", "summaries_ref", "report", "report_one", "row")
LABEL = {
    "loop": "numpy Welford loop",
    "summaries": "`ClusterSummaries.update`",
    "summaries_ref": "the same, Python reference",
    "report": "`ClusterReport` update + get",
    "report_one": "the same in one call (`update_get`)",
    "row": "one exact distance row (floor)",
}


# The page's closing notes (written by hand from the runs: the figures they quote are measured,
# not computed here).
NOTES = [
    'Where the time goes. `ClusterSummaries.update` is one native call (Welford on the cluster and the'
    ' global summary; a numpy vector is read through the buffer protocol, no Python object made). '
    "`ClusterReport` update + get is two native calls and no Python frame but the report's own (one "
    'call with `update_get`; `ReportStep`: below). The update is `SummaryKernel.update_score`: that '
    "Welford step, then in the same call the silhouette's score (the changed cluster's row of "
    'distances between means, O(k·d), eight rows at a time in AVX2 registers where the CPU has them '
    '(four lanes, one register per row), one order of operations on every path so the same bits; its '
    "square roots written into the matrix's row and column with separation's sum in one more pass, of "
    'four AVX2 lanes where the CPU has them: the last paragraph; then the nearest other cluster by the'
    " triangle inequality, O(k) plus O(d) per cluster it cannot rule out), and the point's silhouette "
    'record (one dict entry per distinct point, which revert and `final` need) and its exact running '
    'sums (Python integers, added natively). The get is `SummaryKernel.values_into`, which writes into'
    " the read's dict: SSW, SSB, CH, separation, compactness and Davies-Bouldin computed natively "
    '(O(d) for SSB by its moving anchor, O(1) for SSW, separation and compactness from running `hi + '
    "lo` sums, O(k) for Davies-Bouldin's changed row), CH's ratio and separation's mean with the "
    "views' own operations (the same doubles: "
    "`test_the_reports_one_call_paths_equal_the_call_by_call_ones`); plus the silhouette's running "
    "mean and the report's `cluster_array` (a cached tuple) and `count_array` (one copy). So the "
    'report grows with k·d (one pass over the means for the distance row, which separation needs '
    'exactly) and with k; it does not grow with N. The recompute grows with N²·d (the silhouette).',
    "",
    'Before the one-call path below, per point at d = 16, k = 1,000 (callgrind of the report case '
    'alone, 300 points): 118.1k '
    "instructions, of which native 80.9k — the distance row's pass 25.9k, the rest of the row "
    "(square roots, the row and column write, separation's compensated sum) 18.6k, Davies-Bouldin's "
    "changed row 17.1k, the silhouette's pruned scan 13.4k, the rest of the two calls about 6k — and"
    ' the Python and numpy around them 37.2k; at k = 10, 42.7k, of which native 8.6k and Python '
    "34.2k (the report's, the evaluator's and the summaries' checks and bookkeeping, the "
    "silhouette's record, the dict of 11 values, the copy of the counts). At d = 2, k = 1,000: "
    '92.3k, native 55.7k (row with its write 21.8k, Davies-Bouldin 15.7k, silhouette 13.4k).'
    ' Since (the report\'s plain update calls the evaluator\'s scored update directly (measured with the silhouette\'s record also inlined, since put back as one call: about 0.2k instructions a point); `get` fills a copy of a dict of its keys made at the first read, so no resizing; the same values): callgrind of the report case alone, 300 points (`child_callgrind(d, k, 300, cases=("empty", "report"))` of this script under `benchmarks/instructions.py`, the empty loop subtracted), at k = 1,000 92,476 / 118,014 / 164,480 / 231,113 → 91,271 / 116,891 / 163,171 / 229,962 instructions at d = 2 / 16 / 64 / 128, at k = 10 40,544 / 42,435 / 48,821 / 57,205 → 39,476 / 41,267 / 47,683 / 55,152 (−1.1k to −2.1k a point).',
    "",
    'The floor. "One exact distance row" is that pass alone (`_native.RowPass`: the squared distances '
    "from a cluster's mean to the k means by the widest kernel, one call per point): the least an "
    "exact refresh of the changed cluster's row costs, whatever is built around it. At k = 1,000 the "
    "report's CPU time is the floor plus a part that grows less with d (8.5–19.2 µs in this run): the "
    'column write into the k × k matrix (one cache line per cluster, 8 MB at k = 1,000: 7–10 µs of '
    "thread CPU per point in a Rust microbenchmark of `replace_row` on this machine), Davies-Bouldin's"
    " changed row and the silhouette's scan (10.5k and 9.5k instructions a point at d = 64 since the "
    "last paragraph's lanes), and the report's dict, records and Python state around them (its k = 10 "
    'rows: 2.5–3.6 µs in this run, 2.2–3.4 µs in one call). The pass itself is bound by reading the '
    'means, not by its arithmetic: in a Rust microbenchmark (thread CPU time, k = 1,000, d = 128, 1 MB'
    ' of means) the plain build took 29.5–30.3 µs, the four-lane AVX2 kernel 14.8–15.0 µs, and an '
    'eight-lane AVX-512 one (half the vector operations, since removed) 15.2–15.3 µs: wider registers '
    'buy nothing here.',
    "",
    'The 20 µs goal for `ClusterReport` update + get at k = 1,000 is met at d = 2 (8.9 µs; 8.5 in one '
    "call), d = 16 (11.0; 10.7) and, since the last paragraph's lanes, d = 64 (16.4; 17.3) in this "
    'run, under the load in the header; at d = 128 (29.9; 27.3) it is out of reach of one exact row '
    'refresh per point plus the column write: the row alone is 10.7 µs here, and the rest of the '
    'report (8.5–8.8 µs at d = 2 and 16, where the row is under 2.3 µs; 10.7 µs at d = 64) grows to '
    "19.2 µs at d = 128 (the silhouette's candidates, about 27 a point on this data at d = 128 against"
    ' 13 at d = 64, and the Welford step are O(d); the rest of that growth was not analysed). (In this'
    " page's run before the lanes, load 6.2–5.8: 13.2, 15.2, 21.2 and 32.3 µs, 12.5, 14.4, 23.5 and "
    '31.6 in one call, the row 0.45, 2.5, 5.9 and 11.7 µs.) Writing the column lazily (rows only, '
    'versions telling which copy of a pair is newer) would save the strided writes but read the newer '
    "copies back strided at each row's next refresh and at Davies-Bouldin's rescans: in the same "
    'microbenchmark, a gather of half a column cost 4.1–4.7 µs against 7.1–7.4 µs for the column write'
    ' — about 3 µs a point, not done. In the report itself the write costs less than that '
    'microbenchmark says: a build with the column write left out (values wrong: an experiment only) '
    'ran `per_point("report", d, 1000, 2000)` (this script) 0.9 µs a point faster at d = 2 (18.0 '
    'against 19.0 µs, mean of 5 alternating runs, load 9) and 1.4 µs at d = 16 (20.5 against 21.8, 4 '
    'runs): the strided writes overlap with the rest of the call. At d = 2 and 16 that is the most the'
    ' rows-only scheme could gain, before its gathers take part of it back: not worth a second copy '
    'rule for every reader of the matrix. At d = 64 it is more: the same experiment on the build '
    'before the lanes (`update_get`, 4,000 points after 500, 4 alternating runs, load 1.5) ran 5.3 µs '
    'a point faster (16.9 against 22.2 µs); the rows-only scheme was not retried against that, the '
    "lanes below overlap the stores with the row's other work instead.",
    "",
    'Blocks at d = 2. `update_many` gives the state the single updates give, bit for bit '
    '(`summaries::welford_rows`; tested against the single steps in Rust and against the native '
    "single updates in `test_update_many_is_bit_for_bit_the_native_updates`): each row's Welford "
    'step on the global mean depends on the row before (a subtraction, a product and an addition), '
    'with four correctly rounded divisions per row. A two-pass block (per-cluster sums, then Chan '
    "merges) does not give those bits: Chan's merge `mean_a + (n_b/n)·(mean_b - mean_a)` rounds once"
    ' per merge where the steps round once per row (1,000 rows of 10 clusters at d = 2: means apart '
    'by up to 8·10⁻¹⁶ relative). The floor here is per-column `bincount`, which computes sums, not '
    "that state. For d ≤ 4 the kernel makes one pass over the rows: each row's slot gathered through"
    ' the label table, its count, its four quotients (two divisions of two lanes) and its two steps,'
    ' no array per row; the divisions do not depend on the means, so they run beside the chain of '
    'steps. It made three passes over chunks of 256 rows (the counts and numerators written to '
    'arrays, the quotients, then the steps) and, per block, an array of slots and one of unit '
    'weights (page faults included): about 117 instructions per row in the steps and their factors '
    'and 26 in the binding, now 52 in the pass and 4 in the checks of slots and weights. A block of '
    '10⁵ rows (d = 2, k = 10) takes 8.0M instructions (was 16.4M; k = 1,000: 9.0M, was 17.4M, the '
    "difference the Python per cluster of the block), of which the pass 5.2M, numpy's `bincount` "
    "that finds the block's labels 1.3M and the finite check 0.8M; the native call alone 0.99 → 0.38"
    ' ms of CPU (best of 7, load 8–10). For d > 4 the O(d) steps dominate: rows are stepped one by '
    'one as before, without the per-block arrays (1–4 % fewer instructions).',
    "",
    'Before this change (the build of the previous commit, callgrind of the report case alone, 300 '
    "points, the same script's data): `ClusterReport` update + get at k = 1,000: 99,998 / 125,621 / "
    '172,371 / 238,922 instructions at d = 2 / 16 / 64 / 128, now 92,257 / 118,082 / 164,531 / '
    '231,262 (−8 / −6 / −5 / −3 %); at k = 10 41,358 / 43,366 / 49,831 / 58,212, now 40,904 / 42,715'
    ' / 49,236 / 57,204 (−1 to −2 %). What changed: the column of the distance cache is written with'
    ' unchecked index products (`j·cap + c < cap²` cannot overflow; the release build checks '
    'overflow everywhere else), 25.5k → 18.6k instructions at d = 16; a pointer stepped one row at a'
    ' time cut it to 14.6k but ran 0.5–1 µs a point slower in CPU (alternating runs, load 6–8) and '
    "was not kept; the first position of a row's extreme (Davies-Bouldin's maxima, the silhouette's "
    "nearest bound) is found eight entries at a time; the silhouette's records are tuples, which the"
    ' garbage collector stops tracking (in a 60,000-point stream its share of the CPU profile fell '
    'from 7.4 to 4.9 %). CPU at k = 1,000, three alternating runs of `per_point("report", d, k, '
    '3000)` per build (load 6–8): 15.05 → 14.94, 17.63 → 18.02, 27.81 → 25.15, 38.17 → 37.65 µs at d'
    ' = 2 / 16 / 64 / 128; at k = 10 4.33 → 4.28, 4.37 → 4.33, 5.29 → 4.93, 5.68 → 5.80 µs: within '
    'the noise of the shared machine except at d = 64. Fusing the passes over the k clusters '
    "(Davies-Bouldin's ratio row with its test of the maxima, the silhouette's bounds with their "
    'minimum) was tried and gave more instructions (the fused loops were not vectorised), not kept; '
    "prefetching the column's lines to L2 further ahead was within the noise.",
    "",
    'One call per point (2026-12-05). `ClusterReport.update_get(x, y_pred)` is `update` then `get` '
    'in one native call, `SummaryKernel.update_values`: the Welford step and the score of '
    "`update_score`, then the values of `values` written straight into a copy of the read's dict, "
    "and the point's silhouette record kept in the silhouette's dict natively (`fx = "
    "round(score·2⁵³)`, ties to even as Python's `round`; the running sums, Python integers, were "
    'then added in Python). The two-call path took the last two as well (`update_score` keeps the '
    'record, `values_into` writes the dict: no list and no `dict.update(zip(...))`). The same state '
    'and dicts, bit for bit: `test_the_reports_update_get_equals_update_then_get` (against `update` '
    'then `get` with every one-call path off and on, read after every update, reverts between) and '
    '`test_update_get_rejects_as_update_does_and_changes_nothing`. Callgrind of the report case '
    'alone, 300 points (`child_callgrind(d, k, 300, cases=("empty", case))` under '
    '`benchmarks/instructions.py`, `PYTHONHASHSEED=0`, the empty loop subtracted), the previous '
    'commit → two calls → one call: at k = 10 39,857 / 41,650 / 48,043 / 56,255 → 34,754 / 36,604 / '
    '43,192 / 51,470 → 30,522 / 32,370 / 38,958 / 47,237 instructions at d = 2 / 16 / 64 / 128; at '
    'k = 1,000 91,561 / 117,230 / 163,649 / 230,478 → 87,276 / 112,724 / 159,296 / 226,313 → 82,644 '
    '/ 107,938 / 154,389 / 221,665 (−4.2k to −5.1k a point for the two calls, −8.8k to −9.3k for the '
    'one call). CPU, 4 alternating rounds of `per_point(case, d, k, 2000)` per build (the previous '
    "commit's tree and build, then this one's; load 13.0–13.4 on 2 cores): the previous commit → two "
    'calls → one call, at k = 10 3.76 → 3.94 → 2.92, 3.90 → 3.60 → 3.06, 4.39 → 3.94 → 3.42, 5.03 → '
    '4.73 → 4.08 µs at d = 2 / 16 / 64 / 128 (the one call −19 to −22 %); at k = 1,000 13.69 → 13.85 '
    '→ 12.85, 15.63 → 15.01 → 14.61, 22.64 → 21.97 → 21.35, 31.12 → 30.83 → 30.27 µs (−3 to −7 %; '
    'the two calls within the noise at d = 2). Where the one call\'s instructions go at d = 16, k = '
    '10 (32.4k): the native call 16.8k (it now holds the record and the dict writes), the Python and '
    'numpy around it 15.6k (was about 30k around the two native calls): the interpreter running the '
    "three Python frames (the report's, the evaluator's and the summaries': the checks, the "
    "summaries' count, version and global scatter, the silhouette's sums) about 7k, the copy of the "
    'counts 1.5k, the garbage collector 1.1k, the silhouette\'s running mean (a division of big '
    "integers) 0.9k, the thread guard's acquire 0.5k, the dict copy 0.3k, frames, attribute and dict "
    'accesses about 4k. The goal of under 10k of Python a point was not reached: the summaries\' '
    'count, version and global scatter (read by every other path) and the silhouette\'s exact sums '
    'were Python state each point wrote in three frames (the next paragraph moves those writes into '
    'the native call). At k = 1,000 the '
    'native call dominates: at d = 64, 135.0k of 154.4k (the distance row with its write 87.7k, '
    'Davies-Bouldin 14.6k, the silhouette\'s scan 15.5k, the Welford step 5.8k), at d = 128, 202.2k '
    'of 221.7k (the row 143.7k, of which the pass 123.9k).',
    "",
    'No Python frame (2026-12-05, later). Once a `get` has made the caches, a report\'s plain '
    '`update`, `get` and `update_get` are each one call of `_native.ReportStep` (made by '
    '`IntrinsicEvaluator.report_step` through `ClusterSummaries.report_step`) from the report\'s own '
    'thin frame, where the evaluator\'s, the summaries\' and the silhouette\'s frames ran before: '
    'the step takes the one-call path\'s checks (a positive `int` weight within the total\'s bound, a '
    'known cluster, a vector the kernel reads, the guard) and its kernel call, then writes the '
    'summaries\' count, version and global scatter and the silhouette\'s exact sums where the '
    'Python path keeps them, in the instance dicts their owners hand it (read anew at each call: no '
    'module reads another\'s private names). The sums stay Python integers, added by Python\'s '
    'integer addition, and the running mean is Python\'s correctly rounded integer division over '
    '2⁵³, so no fixed-width integer and no overflow fallback. Anything else returns `None` having '
    'changed nothing, and the report makes its two calls, which raise the clear errors. The same '
    'state and dicts, bit for bit: `test_the_reports_native_step_is_the_python_path_bit_for_bit` '
    '(both spaces, against the report with every one-call path off: weights 1–3, 2¹² and up to the '
    'total\'s bound, a silhouette step beyond int64 and a sum beyond 2⁶⁴, new clusters, reverts '
    'that empty clusters, the whole state compared after every step), '
    '`test_the_reports_native_step_refuses_concurrent_use_and_changes_nothing`, and the tests of '
    'the paragraph above, unchanged. Callgrind of the report cases alone, 300 points '
    '(`child_callgrind(d, k, 300, cases=("empty", case))` under `benchmarks/instructions.py`, '
    '`PYTHONHASHSEED=0`, `OPENBLAS_NUM_THREADS=1`, the empty loop subtracted), the build before '
    '(main at 0c5cc70, whose silhouette account had become a method call since the paragraph above) '
    '→ this one, at d = 2 / 16 / 64 / 128: update + get at k = 10 37,152 / 39,015 / 45,603 / 54,098 '
    '→ 28,158 / 29,941 / 36,329 / 44,545, at k = 1,000 89,254 / 114,458 / 161,071 / 228,181 → '
    '79,300 / 104,861 / 150,949 / 217,944 (−9.0k to −10.2k a point); `update_get` at k = 10 32,938 '
    '/ 34,801 / 41,392 / 49,883 → 25,931 / 27,717 / 34,099 / 42,318, at k = 1,000 84,733 / 110,029 '
    '/ 156,303 / 223,538 → 77,049 / 102,621 / 148,741 / 215,725 (−7.0k to −7.8k). CPU, 4 '
    'alternating rounds of `per_point(case, d, k, 2000)` per build, each in its own process (load '
    '6.1–7.1 on 2 cores), mean before → after: update + get at k = 10 3.98 → 2.77, 4.15 → 2.95, 4.81 '
    '→ 3.40, 5.55 → 4.41 µs (−21 to −30 %), at k = 1,000 15.54 → 13.76, 17.58 → 15.88, 24.58 → '
    '23.15, 35.67 → 34.35 µs (−4 to −11 %); `update_get` at k = 10 3.37 → 2.51, 3.48 → 2.61, 4.12 → '
    '3.08, 4.88 → 3.92 µs (−20 to −26 %), at k = 1,000 14.65 → 13.31, 16.60 → 15.67, 23.40 → 23.06, '
    '35.07 → 34.96 µs (−9 % at d = 2, within the noise at d = 64 and 128). Where `update_get`\'s '
    '27.7k instructions go at d = 16, k = 10: the interpreter 2.0k (the report\'s frame and the '
    'benchmark\'s loop that calls it); the native call 25.7k, of which the kernel\'s arithmetic 9.3k '
    '(the Welford step with the vector\'s read 2.8k, the score with its key 3.6k, the values 2.9k) '
    'and the Python objects the result and the state are made of 16.4k: the silhouette\'s record '
    '(three tuples and a dict entry, the key\'s hash) 3.5k, the eleven values written into a copy of '
    'the keys about 2.4k, the sizes array (numpy\'s copy) 1.5k, the summaries\' and silhouette\'s state '
    'read and written in their dicts about 3k, the guard\'s acquire and release 1.0k, the garbage '
    'collector (the records\' tuples) 1.2k, the running mean\'s integer division 0.5k, the rest '
    'conversions and reference counts. So the goal of under 10k of Python a point is met for the '
    'interpreter (2.0k, was about 11k in three frames and their calls) but not for the Python '
    'objects: a fresh dict of 11 values with a fresh array, and a record per point as Python '
    'tuples, cost about 16k whoever builds them. At k = 1,000 the kernel dominates as before (the '
    'distance row and its column write, Davies-Bouldin\'s row, the silhouette\'s scan), and the 20 µs '
    'goal was still missed at d = 64 and 128 (met at d = 64 since: the next paragraph). The page\'s '
    'tables were then of a run after this change; they are now of the run after the next one.',
    '',
    "Lanes for the O(k) part (2026-12-05, later). At k = 1,000 and d = 64 the report's native call "
    'ran, per point (callgrind of `update_get`, 300 points), 67.9k instructions in the distance pass '
    "and 48k in the O(k) work after it: the square roots, the row and column write with separation's "
    "sum 18.6k, the silhouette's bounds and scan 15.5k, Davies-Bouldin's changed row with its rescans "
    "14.0k. A CPU profile (`perf record` of 15,000 points) put about two thirds of the row write's "
    "samples on the column's strided stores (a cache line each from beyond the 2 MB L2: the matrix is "
    '8 MB), and a build without them (values wrong: an experiment) ran 5.3 µs a point faster (the '
    'paragraph above). Now each of those parts is one pass of four AVX2 lanes, with the operations and'
    " the folds of its plain path, so the same bits: `finish_row_avx2` takes the pass's squared "
    'distances to their roots (0 at free slots and at the cluster itself), writes row and column and '
    "steps separation's four TwoSum lanes in one loop, the column's stores going out beside the square"
    ' roots and the chain of additions instead of after them, their lines asked for (`prefetcht0`) 32 '
    "rows ahead; the silhouette's bounds are made and folded to their minimum in one pass (the scratch"
    " buffer no longer filled first), the minimum's first position and the candidates below the best "
    "so far then found four at a time by a mask; Davies-Bouldin's ratios, the test of the maxima and "
    "the fold of the row's maximum are one pass, each rescanned row another. The plain path is "
    'unchanged (`STREAMEVAL_SIMD=plain`). Held together by '
    '`the_lane_kernels_give_the_plain_bits_on_ties` (Rust: 150 random lattices with equal means, equal'
    ' distances and equal scatters, every width mod 4, widths below the capacity, free slots: the '
    'matrix, its sum, the scores, the maxima, their positions and their sum against the plain kernels,'
    ' bit for bit) and `test_the_report_is_the_same_on_every_simd_path` (now also a lattice stream of '
    '37 clusters with reverts that empty clusters, every read and the distance matrix compared between'
    ' a plain and an AVX2 process); every read of streams at k = 37 to 1,000 also hashed alike on the '
    'previous build and this one, on both paths. Per point at d = 64, k = 1,000 the row write went '
    '18.6k → 12.6k instructions, the silhouette 15.5k → 9.5k, Davies-Bouldin 14.0k → 10.5k. Callgrind '
    'of the report cases alone (`PYTHONHASHSEED=0`, `OPENBLAS_NUM_THREADS=1`, 300 points, the empty '
    'loop subtracted), the previous build → this one, at d = 2 / 16 / 64 / 128 and k = 1,000: update +'
    ' get 79,267 / 104,936 / 151,219 / 218,457 → 63,497 / 88,504 / 135,891 / 202,551 (−15.3k to −16.4k'
    ' a point), `update_get` 75,512 / 101,172 / 147,547 / 214,581 → 59,690 / 84,727 / 132,213 / '
    '198,701; at k = 10 −0.7k a point. CPU, 4 alternating rounds of `per_point(case, d, 1000, 2000)` '
    'per build, each in its own process (load 3.3–3.4 on 2 cores), mean before → after: update + get '
    '12.92 → 9.26, 14.92 → 11.25, 21.19 → 17.38, 31.60 → 27.45 µs at d = 2 / 16 / 64 / 128 (−28, −25, '
    '−18, −13 %); `update_get` 12.28 → 8.87, 14.49 → 11.43, 21.14 → 16.75 µs at d = 2 / 16 / 64 (−28, '
    '−21, −21 %) and at d = 128 30.64 → 27.12 µs (5 more rounds, −11 %); at k = 10 within 0.1 µs. '
    "Tried and not kept: prefetching the column's lines during the distance pass (1–2 µs a point "
    'slower at d = 64: those fetches and the reads of the pass compete), non-temporal stores '
    'for the column (35 against 21 µs), prefetching 16 or 64 rows ahead, to L2 only or for writing '
    "(`prefetchw`) (within the noise of 32 rows to L1); Davies-Bouldin's inverses `1/d` made in the "
    "row pass beside the column's stores and read by its changed row (0.5k fewer instructions a point,"
    ' no CPU gain measured at d = 2 or 64). What is left at d = 64: the pass (5.7 µs in this run), the'
    " column's stores (still most of the row write's CPU), Davies-Bouldin's divisions (one per entry "
    "of the changed row and of each rescanned row) and the report's Python objects (about 16k "
    'instructions). At d = 128 the goal needs more than the O(k) part: the row alone is 10.7 µs. The '
    'tables above are of a run of this build (`OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python '
    'benchmarks/bench_intrinsic.py`, 2026-12-05, the load in the header); their instruction counts '
    'are of a process without `PYTHONHASHSEED` set, within 0.5k a point of this paragraph\'s.',
]


def data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=10.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)
    return centers[y] + rng.normal(size=(n, d)), y


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def stepper(case: str, X, y, k: int):
    """``(step, warm)``: ``step(x, p)`` does one point of ``case``; the k clusters are seeded."""
    d = X.shape[1]
    if case == "loop":  # Welford per point in numpy: what a hand-written streaming loop costs
        count, mean, m2 = np.zeros(k), np.zeros((k, d)), np.zeros(k)

        def step(x, p):
            count[p] += 1
            delta = x - mean[p]
            mean[p] += delta / count[p]
            m2[p] += delta @ (x - mean[p])
    elif case == "row":  # the floor of one exact row refresh: one pass over the k x d means
        from streameval import _native

        step = _native.RowPass(np.ascontiguousarray(X[:k]), _native._simd_paths()[-1])
    elif case in ("summaries", "summaries_ref"):
        s = se.ClusterSummaries(native=case == "summaries")
        step = s.update
    elif case == "report":
        rep = se.ClusterReport()
        upd, read = rep.update, rep.get

        def step(x, p):
            upd(x, p)
            read()
    elif case == "report_one":  # the same in one call: update_get
        rep = se.ClusterReport()
        step = rep.update_get
    else:  # pragma: no cover
        raise ValueError(case)
    if case == "row":
        return lambda x, p: step(p)  # the row of the point's cluster
    for x, p in zip(X[:k], y[:k].tolist()):
        step(x, p)
    return step


def per_point(case, d, k, m, seed=0) -> float:
    """CPU seconds per point of ``case`` over ``m`` points after the k seeds (best of 3 runs)."""
    X, y = data(k + m, d, k, seed)
    best = float("inf")
    for _ in range(3):
        step = stepper(case, X, y, k)
        pts = list(zip(X[k:], y[k:].tolist()))
        t0 = time.process_time()
        for x, p in pts:
            step(x, p)
        best = min(best, (time.process_time() - t0) / m)
    return best


def child_callgrind(d: int, k: int, m: int, cases=("empty",) + CASES) -> dict:
    """The measured loops of every case at one grid point, one ``functools.reduce`` each (the
    only function collected, dumped after each call); the k seeds are made before, uncounted."""
    import functools

    X, y = data(k + m, d, k)
    pts = list(zip(X[k:], y[k:].tolist()))
    for case in cases:
        if case == "empty":
            def step(acc, xp):
                x, p = xp
        else:
            one = stepper(case, X, y, k)

            def step(acc, xp, one=one):
                x, p = xp
                one(x, p)
        functools.reduce(step, pts, None)
    return {"cases": list(cases)}


def callgrind(d: int, k: int, m: int) -> dict:
    """``{case: instructions per point}`` (the empty loop's subtracted); empty without valgrind."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import instructions

    if not instructions.available():
        return {}
    cases = ("empty",) + CASES
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(d), str(k), str(m)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    totals = dict(zip(cases, instructions.counts(cmd, len(cases), env=env)))
    empty = totals.pop("empty")
    return {case: (v - empty) / m for case, v in totals.items()}


def floors(X, y, k: int) -> tuple:
    """The numpy floor's two ways of grouping a block: ``np.add.at``, and one ``np.bincount``
    per dimension (each with the counts)."""
    d = X.shape[1]

    def add_at():
        sums = np.zeros((k, d))
        np.add.at(sums, y, X)
        np.bincount(y, minlength=k)

    def per_column():
        np.bincount(y, minlength=k)
        for j in range(d):
            np.bincount(y, weights=X[:, j], minlength=k)

    return add_at, per_column


def blocks(d, k, m, seed=0) -> tuple[float, float]:
    """``(update_many, floor)`` CPU seconds for a block of ``m`` points (best of 3)."""
    X, y = data(m, d, k, seed)

    def best(f):
        out = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            f()
            out = min(out, time.process_time() - t0)
        return out

    add_at, per_column = floors(X, y, k)
    s = se.ClusterSummaries()
    s.update_many(X[:k], y[:k])  # the clusters exist: the steady state of a stream of blocks
    return best(lambda: s.update_many(X, y)), min(best(add_at), best(per_column))


def child_blocks(d: int, k: int, m: int) -> dict:
    """One block of ``m`` points as :func:`blocks` makes it, measured once under callgrind (one
    ``functools.reduce`` each: an empty call, ``update_many``, the per-column floor); the
    clusters and a warm-up block made before, uncounted."""
    import instructions

    X, y = data(m, d, k)
    s = se.ClusterSummaries()
    s.update_many(X[:k], y[:k])
    s.update_many(X[:1000], y[:1000])
    per_column = floors(X, y, k)[1]
    per_column()
    instructions.measured(lambda: None)
    instructions.measured(s.update_many, X, y)
    instructions.measured(per_column)
    return {"cases": ["empty", "update_many", "floor"]}


def blocks_callgrind(d: int, k: int, m: int) -> tuple[float, float] | None:
    """``(update_many, floor)`` instructions per row of a block of ``m`` (``None`` without
    valgrind): one child process under callgrind, the empty call's count subtracted."""
    import instructions

    if not instructions.available():
        return None
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child-blocks", str(d), str(k), str(m)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    empty, um, floor = instructions.counts(cmd, 3, env=env)
    return (um - empty) / m, (floor - empty) / m


def blocks_section(bm: int, rows: list, load: tuple[float, float] | None = None) -> list[str]:
    """The page's lines for the blocks: ``rows`` of ``(d, k, update_many s, floor s, (update_many,
    floor) instructions per row or None)``; ``load`` when the section ran alone."""
    ran = (f" This section rerun alone (`--only-blocks`), load {load[0]:.1f} at its start and "
           f"{load[1]:.1f} at its end." if load else "")
    lines = [
        f"## Blocks: `update_many` of {bm:,} points (ms of CPU)",
        "",
        "`ClusterSummaries.update_many` (checks every row, groups the labels, then the Welford steps "
        "of the single updates, natively, in order) against the numpy floor of the grouping alone: "
        "per-cluster counts and sums, the faster of `np.add.at` and one `np.bincount` per dimension. "
        "Instructions per row from callgrind (one block; the floor's by `np.bincount` per "
        "dimension)." + ran,
        "",
        "| d | k | update_many | numpy floor | ratio | instructions per row: update_many | floor |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for d, k, um, floor, cg in rows:
        ins = f"{cg[0]:,.0f} | {cg[1]:,.0f}" if cg else "– | –"
        lines.append(f"| {d} | {k:,} | {um * 1e3:.2f} | {floor * 1e3:.2f} | {um / floor:.2f}× | {ins} |")
    return lines


def run_blocks(bm: int, ks) -> list:
    """Every row of the blocks table, printed as it comes."""
    rows = []
    for d in (2, 16, 128):
        for k in ks:
            um, floor = blocks(d, k, bm)
            cg = blocks_callgrind(d, k, bm)
            rows.append((d, k, um, floor, cg))
            print(f"block m={bm} d={d} k={k}: update_many {um * 1e3:.2f} ms, floor {floor * 1e3:.2f} ms"
                  + (f"; instructions per row {cg[0]:,.1f}, floor {cg[1]:,.1f}" if cg else ""), flush=True)
    return rows


def only_blocks(args, ks) -> None:
    """Rerun the blocks section and rewrite it (and its paragraph in the notes) in the page."""
    bm = 20_000 if args.quick else 100_000
    load0 = os.getloadavg()[0]
    rows = run_blocks(bm, ks)
    load1 = os.getloadavg()[0]
    page = args.out.read_text().split("\n")
    start = next(i for i, line in enumerate(page) if line.startswith("## Blocks: "))
    end = next(i for i in range(start + 1, len(page)) if page[i].startswith("## "))
    page[start:end] = blocks_section(bm, rows, (load0, load1)) + [""]
    note = next(n for n in NOTES if n.startswith("Blocks at d = 2."))
    at = next(i for i, line in enumerate(page) if line.startswith("Blocks at d = 2."))
    page[at] = note
    args.out.write_text("\n".join(page))
    print(f"wrote {args.out} (the blocks section)")


def sklearn_recompute(d, k, n) -> float:
    from sklearn import metrics as skm

    X, y = data(n, d, k)
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        skm.calinski_harabasz_score(X, y)
        skm.davies_bouldin_score(X, y)
        skm.silhouette_score(X, y, metric="sqeuclidean")
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None):
    if argv is None and len(sys.argv) > 1 and sys.argv[1] in ("--child", "--child-blocks"):
        d, k, m = map(int, sys.argv[2:5])
        print(json.dumps((child_callgrind if sys.argv[1] == "--child" else child_blocks)(d, k, m)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only-blocks", action="store_true",
                    help="rerun the blocks section alone and rewrite only it in the existing page")
    args = ap.parse_args(argv)
    dims, ks = (2, 16, 64, 128), (10, 1000)
    if args.only_blocks:
        only_blocks(args, ks)
        return
    m = 300 if args.quick else 3000
    load0 = os.getloadavg()[0]
    grid = []
    for d in dims:
        for k in ks:
            row = {case: per_point(case, d, k, m) for case in CASES}
            grid.append((d, k, row))
            print(f"d={d:4d} k={k:5d}  " + "  ".join(f"{c} {v * 1e6:8.2f} us" for c, v in row.items()), flush=True)
    cg_m = 100 if args.quick else 300
    cg = {}
    for d in dims:
        for k in ks:
            got = callgrind(d, k, cg_m)
            if not got:
                break
            cg[d, k] = got
            print(f"callgrind d={d} k={k}: " + ", ".join(f"{c} {v:,.0f}" for c, v in got.items()), flush=True)
    bm = 20_000 if args.quick else 100_000
    block_rows = run_blocks(bm, ks)
    peer_n = 1000 if args.quick else 3000
    peers = [(d, k, sklearn_recompute(d, k, max(peer_n, 2 * k))) for d in (2, 64) for k in ks]
    import sklearn

    from streameval import _native

    load1 = os.getloadavg()[0]
    cmd = "PYTHONPATH=. python benchmarks/bench_intrinsic.py" + (" --quick" if args.quick else "")
    lines = [
        "# Intrinsic metrics: native summaries and views, against a numpy floor and scikit-learn",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {cpu_name()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}  ",
        f"Python {sys.version.split()[0]}, numpy {np.__version__}, scikit-learn {sklearn.__version__}; "
        f"distance kernels: {', '.join(_native._simd_paths())} (the widest runs)  ",
        f"Load (1-minute average) at the start and the end of the run: {load0:.1f} and {load1:.1f} "
        f"on {os.cpu_count()} cores",
        "",
        "The machine was shared with other jobs: CPU times are the best of 3 runs in one process, "
        "and the ratios between the rows of one run are what to read (instruction counts below are "
        "stable under load). Intrinsic metrics read points, not a contingency table: cells per "
        "row do not apply; the size is the k clusters and the d dimensions.",
        "",
        "## Per point (µs of CPU)",
        "",
        f"The k clusters seeded, then {m:,} points of Gaussian blobs, each one call (ClusterReport: an "
        "update and a get of its 7 metrics). The numpy Welford loop is the floor of a hand-written "
        "per-point loop (count, mean, scatter per cluster, no checks).",
        "",
        "| d | k | " + " | ".join(LABEL[c] for c in CASES) + " | summaries / loop | report / loop |",
        "|---:|---:|" + "---:|" * (len(CASES) + 2),
    ]
    for d, k, row in grid:
        lines.append(f"| {d} | {k:,} | " + " | ".join(f"{row[c] * 1e6:.2f}" for c in CASES)
                     + f" | {row['summaries'] / row['loop']:.2f}× | {row['report'] / row['loop']:.1f}× |")
    lines += [""]
    if cg:
        lines += [
            f"## Instructions per point (callgrind, {cg_m:,} points after the k seeds)",
            "",
            "The same cases and grid; the empty loop's instructions subtracted. Stable under load: "
            "these are the figures to compare between runs and machines.",
            "",
            "| d | k | " + " | ".join(LABEL[c] for c in CASES) + " | summaries / loop | report / loop |",
            "|---:|---:|" + "---:|" * (len(CASES) + 2),
        ]
        for (d, k), row in cg.items():
            lines.append(f"| {d} | {k:,} | " + " | ".join(f"{row[c]:,.0f}" for c in CASES)
                         + f" | {row['summaries'] / row['loop']:.2f}× | {row['report'] / row['loop']:.1f}× |")
        lines += [""]
    lines += blocks_section(bm, block_rows)
    lines += [
        "",
        f"## Peer: recomputing with scikit-learn over N = {peer_n:,} points (ms of CPU)",
        "",
        "What a per-point refresh costs without streaming summaries: `calinski_harabasz_score` + "
        "`davies_bouldin_score` + `silhouette_score(metric=\"sqeuclidean\")`.",
        "",
        "| d | k | scikit-learn recompute | / ClusterReport update + get |",
        "|---:|---:|---:|---:|",
    ]
    report = {(d, k): row["report"] for d, k, row in grid}
    for d, k, peer in peers:
        lines.append(f"| {d} | {k:,} | {peer * 1e3:.1f} | {peer / report[d, k]:,.0f}× |")
    lines += [
        "",
        *NOTES,
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
