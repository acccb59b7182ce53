"""One script per published figure or table (``<paper>_<item>.py``); see README."""
