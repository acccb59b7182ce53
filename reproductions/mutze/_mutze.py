"""Paper-wide pieces of the mutze reproductions (U. Mutze, "A Simple Variational
Integrator for General Holonomic Mechanical Systems", ``../shared/papers/002_*.txt``).

The methods of the paper are mpvi's ``mutze`` (the g-family, eqs. 72-80; g = 0 is the
direct midpoint method), ``mutze_variation`` (the midpoint variation method, eqs. 54/57)
and ``mutze_parabolic_el`` (the Euler-Lagrange equation for parabolic paths, eq. 44);
all take one step of length h = 2 tau from the state (x, v).
"""
PAPER = "mutze"
