"""Tasks: one module per task, each a dataset + loss + decoding (+ truth where known);
``registry`` names them."""
