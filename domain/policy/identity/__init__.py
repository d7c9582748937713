"""The identity gate: does a document belong to the chart's patient?"""
