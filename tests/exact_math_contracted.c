/*
 * exact_math_contracted.c - opp__exp and opp__tanh compiled with contraction
 * forced on (-mfma -ffp-contract=fast, see tests/BUILD), for
 * exact_math_test.c to check that contraction cannot change their bits.
 * Called only after the test has checked that the CPU has FMA.
 */
#include "numerics/exact_math.h"

double opp_test_exp_contracted(double x);
double opp_test_tanh_contracted(double x);

double opp_test_exp_contracted(double x) {
    return opp__exp(x);
}

double opp_test_tanh_contracted(double x) {
    return opp__tanh(x);
}
