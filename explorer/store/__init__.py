"""Part of the explorer (see osf_check.explorer); interface to be documented."""
