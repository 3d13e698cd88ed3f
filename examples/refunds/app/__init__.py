"""The refund desk: a small app whose harness is assembled from a spec (see ../README.md)."""
