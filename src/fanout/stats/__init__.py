"""The statistics of a run, which render nothing and read no file: figures in, figures out.

    agreement        Cohen's and Fleiss' kappa, Krippendorff's alpha; per pair, per model, overall
    uncertainty      Wilson intervals, the percentile bootstrap over edits, McNemar's exact test
    dawid_skene      consensus and per-model confusion matrices without ground truth
    decisions        the committee: majority, weighted and Dawid–Skene votes; pause / auto-pass thresholds;
                     which edits a human must see, and why
    calibration      ECE, Brier, held-out isotonic calibration maps
    scoring          accuracy and reject precision/recall against the truth; McNemar between models
    spend            what the run cost per model, in total and projected
    model_health     statuses, effort, sources claimed verified but never fetched
    replay           --policy: cascades and routers replayed over a run that asked every model
    measured         accuracy per aspect, for --router-accuracy
    human_decisions  models and committee rules against a reviewer's decisions
    certify          certified auto-decisions: fixed-sequence testing on human decisions (binomial: its exact tail)
    ppi              prediction-powered accuracy intervals from few human decisions and many verdicts
    draw             which items people see next: a seeded random share beside the most uncertain
    guarantee        the committee against the people who decided: its certified auto-decisions, each model's
                     and rule's prediction-powered accuracy, each model's kappa with the people

The report (fanout.report) reads the run and renders these figures; an
import contract keeps this package free of it, of the engine and of every
client and run file.
"""
