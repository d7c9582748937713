"""Clinical workbooks (doc_type ``clinical_workbook``): XLSX cells -> cited facts."""
