"""Domains: generators and renderers of the Sparling paper's synthetic data, no Task in sight.

One module per concept: ``digit_circle`` (digits on a circle), ``latex_grammar`` (LaTeX-OCR
tokens and the paper's grammar), ``latex_mathtext`` (their mathtext rendering), ``latex``
(LaTeX-OCR images), ``spoken_digits`` (AudioMNIST-layout corpora: loading, checking,
speaker splits), ``espeak_corpus`` (an offline corpus from espeak-ng) and ``audio_sequence``
(AudioMNISTSequence samples and their log-mel spectrogram). They import nothing above
``errors`` and ``io``; ``tasks/`` adapts them for training (config, model, loss, decoding).
"""
