"""mpvi's version, at the ground floor: the package and the files it writes (provenance,
solution files) read it from here."""

__version__ = "0.2.0"
