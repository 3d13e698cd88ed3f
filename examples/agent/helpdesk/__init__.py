"""The help desk: a support agent whose harness is assembled from a spec (see ../README.md)."""
