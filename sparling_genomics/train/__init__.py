"""The shared trainer: loop, annealing hook, checkpoints, resume, progress, logs."""
