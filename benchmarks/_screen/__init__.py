"""Issue 33's acceptance benchmarks: certa's screen-then-race against GridSearchCV, Halving and Optuna."""
