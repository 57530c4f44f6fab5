"""What a session leaves for people and tools.

:mod:`~autofix.reports.terminal` renders progress and the summary with rich;
:mod:`~autofix.reports.formats` the JSON report (schema ``report.schema.json``), the HTML
page (matplotlib loss curves) and the Markdown report; :mod:`~autofix.reports.batch` the
batch report.

Imports: autofix.types, autofix.words, autofix.run.child.symptoms, autofix.batch.jobs.
"""
