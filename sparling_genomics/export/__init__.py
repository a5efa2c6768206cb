"""From trained models to motifs and tracks: sites, PWMs, motif files, logos, names, families,
genome scans and browser tracks. Pure pieces; the verbs' runners (``runners/``) call them."""
