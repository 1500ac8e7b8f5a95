"""Values printed in the papers, as printed, shared by the tests that reproduce them."""

# Table 1 of the paper, as printed (3 significant digits): sigma -> (M_BE+1/sqrt(2pi), M_exact, Min N)
TABLE1 = {
    "simplified": {
        0.5: (1.57e9, 1.57e9, 7.87e9),
        0.75: (3.71e6, 3.72e6, 2.79e7),
        1.0: (1.14e6, 1.14e6, 1.14e7),
        1.5: (3.23e6, 3.23e6, 4.85e7),
        2.0: (1.49e7, 1.49e7, 2.98e8),
    },
    "exact": {
        0.5: (1.57e9, 1.57e9, 7.86e9),
        0.75: (3.10e6, 3.10e6, 2.33e7),
        1.0: (4.29e5, 4.30e5, 4.30e6),
        1.5: (1.03e5, 1.03e5, 1.54e6),
        2.0: (5.90e4, 5.91e4, 1.18e6),
    },
}
