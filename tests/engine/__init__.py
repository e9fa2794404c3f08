"""Engine tests (a package, so their basenames may repeat in the labs' test folders)."""
