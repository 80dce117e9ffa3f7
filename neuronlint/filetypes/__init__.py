"""Files other than Python modules: one pure scanner per kind (their kinds: neuronlint.filekinds).

Every scanner takes the file's text (and the compiled database lookups where it needs them) and
returns detections, the same dicts the Python checkers produce; none of them executes, imports or
evaluates anything from the file (YAML is read line by line, never with a YAML loader).
"""
