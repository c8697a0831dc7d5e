"""Batch functions: scikit-learn-style ``f(labels_true, labels_pred) -> value``.

The label metrics (:mod:`.labels`) count both labellings natively in one bulk call and read the
streaming metrics' exact sums, so a batch value has the streaming value's bits; their independent
numpy twins (:mod:`.reference`, written from the formulas apart from the streaming code) are the
tests' oracle and the fallback without the native extension. Inputs are any
one-dimensional sequences of equal length (lists, numpy arrays, pandas Series). Labels are grouped
as :meth:`streameval.Contingency.update` groups them (Python equality: ``1 == 1.0 == True``, while
``1`` and ``"1"`` differ; see :mod:`streameval.labels`), and a missing label (``None``, NaN,
``pandas.NA``, ``NaT``) raises :class:`~streameval.errors.MissingLabelError`. Label metrics live in :mod:`.labels`; intrinsic metrics over feature vectors,
``f(X, labels_pred)``, in :mod:`.intrinsic`.

>>> from streameval import batch
>>> batch.elm_score([1, 1, 2], [1, 1, 1])   # every *_score returns a float, as in scikit-learn
0.4444444444444444
>>> batch.elm_precision_recall_fscore([1, 1, 2], [1, 1, 1])   # the (P, R, F) triple
(0.3333333333333333, 1.0, 0.4444444444444444)
>>> batch.adjusted_rand_score([0, 0, 1, 1], [1, 1, 0, 0])
1.0
"""

from .coreference import (
    adjusted_mutual_info_score,
    blanc_precision_recall_fscore,
    blanc_score,
    ceaf_precision_recall_fscore,
    ceaf_score,
    cluster_accuracy_score,
    lea_precision_recall_fscore,
    lea_score,
    muc_precision_recall_fscore,
    muc_score,
)
from .intrinsic import (
    calinski_harabasz_score,
    compactness_score,
    davies_bouldin_score,
    prequential_silhouette_score,
    rms_compactness_score,
    rms_davies_bouldin_score,
    separation_score,
    silhouette_samples,
    silhouette_score,
    ssb_score,
    ssw_score,
)
from .labels import (
    adjusted_rand_score,
    bcubed_precision_recall_fscore,
    bcubed_score,
    completeness_score,
    contingency_cells,
    contingency_matrix,
    elm_precision_recall_fscore,
    elm_score,
    fowlkes_mallows_score,
    homogeneity_completeness_v_measure,
    homogeneity_score,
    inverse_purity_score,
    mutual_info_score,
    normalized_mutual_info_score,
    pair_confusion_matrix,
    pair_f1_score,
    pair_jaccard_score,
    pair_precision_score,
    pair_recall_score,
    purity_score,
    rand_score,
    v_measure_score,
    variation_of_information,
)

# many candidate segmentations against one truth
from .pss import (
    contiguous_clusterings,
    contiguous_f1_sums,
    contiguous_rank_agreement,
    rank_agreement,
    score_candidates,
    segment_entropy,
)
from .sample import estimate_from_sample, ratio_of_means, sample_terms

__all__ = [
    "estimate_from_sample",
    "ratio_of_means",
    "sample_terms",
    "contingency_cells",
    "contingency_matrix",
    "pair_confusion_matrix",
    "elm_score",
    "elm_precision_recall_fscore",
    "bcubed_score",
    "bcubed_precision_recall_fscore",
    "rand_score",
    "adjusted_rand_score",
    "pair_precision_score",
    "pair_recall_score",
    "pair_f1_score",
    "pair_jaccard_score",
    "fowlkes_mallows_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "homogeneity_score",
    "completeness_score",
    "v_measure_score",
    "homogeneity_completeness_v_measure",
    "variation_of_information",
    "purity_score",
    "inverse_purity_score",
    # coreference and on-demand matching metrics
    "muc_score",
    "muc_precision_recall_fscore",
    "blanc_score",
    "blanc_precision_recall_fscore",
    "lea_score",
    "lea_precision_recall_fscore",
    "ceaf_score",
    "ceaf_precision_recall_fscore",
    "cluster_accuracy_score",
    "adjusted_mutual_info_score",
    # intrinsic (feature-based) metrics
    "ssw_score",
    "ssb_score",
    "calinski_harabasz_score",
    "separation_score",
    "compactness_score",
    "davies_bouldin_score",
    "rms_compactness_score",
    "rms_davies_bouldin_score",
    "silhouette_score",
    "silhouette_samples",
    "prequential_silhouette_score",
    # many candidate segmentations against one truth
    "contiguous_clusterings",
    "score_candidates",
    "contiguous_f1_sums",
    "segment_entropy",
    "rank_agreement",
    "contiguous_rank_agreement",
]
