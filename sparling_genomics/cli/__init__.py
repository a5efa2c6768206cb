"""The command line, ``sparling-genomics VERB ...``: ``main.py`` holds the group and its error
handling, ``options.py`` the options verbs share, and one module per group of verbs holds
their parsing. Thin: each verb parses, then calls one library function."""
