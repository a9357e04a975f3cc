"""Small helpers every part may use; it imports nothing of ours."""
