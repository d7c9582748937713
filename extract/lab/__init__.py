"""Lab reports (doc_type ``lab_pdf``): result rows and prose -> cited lab results."""
