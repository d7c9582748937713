"""Reading documents into the chart: upload, jobs, the worker and its sandboxed child
processes, the pipeline, categories, the demo load, and operations figures."""
