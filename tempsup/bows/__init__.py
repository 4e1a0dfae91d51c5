"""The correlated-features lab: tied autoencoders on correlated features (science.md §2).

After Prieto, Stevinson, Barsbey et al., "From Data Statistics to Feature
Geometry: How Correlations Shape Superposition" (arXiv 2603.09972). One module
per concept, like the RNN side of tempsup:

    config    BowsConfig: the run's settings, validated and hashed (kind "bows")
    data      generators: circle, figure-8, sphere, i.i.d. control, bag of words
    model     BatchedTiedAE: x̂ = σ(WᵀWx + b) for many seeds and bottlenecks at once
    train     the authors' recipe (AdamW, cosine per epoch, clipping), yielding snapshots
    analysis  covariance, WᵀW, PCA, R², and the measures of the paper's claims
    run       BowsRun and its .npz file; stream_frames, train_runs, sweeps
    sweep     the sweep over m (and weight decay, and model) as one queued job
    grid      the authors' main figure as one job, its measured words, the shipped grid
    figures   pure Plotly panels, the animation, HTML export, the sweep and grid figures

The job kinds "bows" and "bows-sweep" are in `tempsup.jobs.kinds`.
"""
