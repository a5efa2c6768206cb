"""From trained models to motifs: sites, PWMs (and, later, files, logos, tracks)."""
