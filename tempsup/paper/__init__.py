"""The paper (Sharma, Proca, Prieto, Mediano — ICLR 2026) as presets and a report.

`tempsup.paper.preset`: what a preset and a measured claim are, and the
registry type; `tempsup.paper.presets`: one module per preset (its runs, its
checks, its summary figure) and the registry of them; `tempsup.paper.reproduce`:
train them all, check every claim, write the report. The measurements the
checks share are in `tempsup.analysis.measures`.
"""
