"""The migration report (`neuronlint report`): lock-in scores for both directions with their
breakdown, blockers, hot spots, replacements, effort, what-if and trend, as HTML, Markdown or JSON.

build.build_report() assembles one JSON-ready dict; html.render() and markdown.render() draw it.
"""
