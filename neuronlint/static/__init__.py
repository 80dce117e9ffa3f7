"""Static analysis: parse each file once with LibCST and run every checker in one traversal."""
