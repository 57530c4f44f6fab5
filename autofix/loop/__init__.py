"""The repair loop: run, judge, apply a recipe, commit, run again.

:mod:`~autofix.loop.engine` sequences one session (:func:`~autofix.loop.engine.repair`: a
loop over an immutable state); :mod:`~autofix.loop.session` holds the session's world (its
runs and their verdicts); :mod:`~autofix.loop.attempt` applies and commits the fixes for a
diagnosis; :mod:`~autofix.loop.drift` runs the API check before run 1;
:mod:`~autofix.loop.diagnosis` sorts a failed run into a category;
:mod:`~autofix.loop.verdicts` judges a run healthy or not and lists what a healthy run
still got wrong (findings); :mod:`~autofix.loop.fixgroups` decides whether the run after a
fix shows it helped; :mod:`~autofix.loop.api_check` checks the script's library API before
run 1; :mod:`~autofix.loop.messages` words the fix commit.

Imports: autofix.types, autofix.errors, autofix.paths, autofix.settings,
autofix.categories, autofix.toolkit, autofix.run, autofix.vcs, autofix.words.
"""
