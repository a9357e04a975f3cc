"""A user's own library: the PDFs they upload (private rows and files beside the catalog) and the reading
lists they bring from elsewhere."""
