"""Outside formats in and out of the chart: the FHIR R4 export (issue 25)."""
