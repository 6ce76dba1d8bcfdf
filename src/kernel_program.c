/* The kernel of a call, read once: the postfix program that R makes
 * (R/kernel_spec.R's kernel_program(): base kernels and the operations
 * that keep a kernel positive semidefinite: sums, products, positive
 * scaling, whole powers, exp, conformal weights g(x) g(y)) checked and
 * parsed into a kernel_eval, each base kernel's parameters checked for
 * what would crash or loop (R validates their ranges); and the error of
 * kernel values that are not finite, with a hint fit to the kernel. */
#include "fastkpca.h"
#include <Rmath.h>
#include <math.h>
#include <string.h>

static SEXP program_part(SEXP program, const char *name)
{
    SEXP names = getAttrib(program, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(program); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(program, i);
    error_argument("'kernel' program lacks '%s'", name);
    return R_NilValue; /* not reached */
}

/* Check that the program's stack never underflows and ends with one value;
 * returns the stack depth it needs. */
static int program_depth(const kernel_eval *k)
{
    int top = 0, depth = 0;
    for (int o = 0; o < k->nops; o++) {
        double arg = k->args[o];
        switch (k->ops[o]) {
        case OP_BASE:
            if (!(arg >= 0 && arg < k->nbase && arg == floor(arg)))
                error_argument("'kernel' program: base kernel %g does not exist", arg);
            top++;
            break;
        case OP_ADD: case OP_MUL:
            if (top < 2) error_argument("'kernel' program: an operation lacks its operands");
            top--;
            break;
        case OP_SCALE:
            if (!(R_FINITE(arg) && arg > 0))
                error_argument("'kernel' program: a scale must be positive");
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_POWER:
            if (!(arg >= 1 && arg <= KERNEL_MAX_POWER && arg == floor(arg)))
                error_argument("'kernel' program: a power must be a whole number of at least 1");
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_EXP:
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_CONFORMAL:
            if (!(arg >= 0 && arg < k->nweights && arg == floor(arg)))
                error_argument("'kernel' program: conformal weights %g do not exist", arg);
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        default:
            error_argument("'kernel' program: unknown operation %d", k->ops[o]);
        }
        if (top > depth) depth = top;
    }
    if (top != 1) error_argument("'kernel' program must leave exactly one kernel value");
    return depth;
}

/* A base kernel from its code and its parameters in kpar_slots order.
 * R validates ranges; C re-checks what would crash or loop. */
static void base_spec(int code, const double *p, kernel_spec *spec)
{
    memset(spec, 0, sizeof(kernel_spec));
    if (code <= KERNEL_PRECOMPUTED || code >= KERNEL_COUNT)
        error_argument("'kernel' code %d is not a known kernel", code);
    for (int k = 0; k < KPAR_COUNT; k++)
        if (!R_FINITE(p[k])) error_argument("'kpar' values must be finite");
    spec->code = (kernel_code) code;
    spec->sigma = p[KPAR_SIGMA];
    spec->degree = p[KPAR_DEGREE];
    spec->scale = p[KPAR_SCALE];
    spec->offset = p[KPAR_OFFSET];
    spec->order = p[KPAR_ORDER];
    spec->bessel_lim = 1.0;
    switch (spec->code) {
    case KERNEL_RBF: case KERNEL_LAPLACE: case KERNEL_ANOVA:
        if (spec->sigma <= 0) error_argument("'sigma' must be positive");
        break;
    case KERNEL_BESSEL:
        if (spec->sigma <= 0) error_argument("'sigma' must be positive");
        if (spec->order < 0 || spec->order > BESSEL_MAX_ORDER)
            error_argument("'order' must be between 0 and %g", BESSEL_MAX_ORDER);
        spec->bessel_lim = 1.0 / (gammafn(spec->order + 1.0) * R_pow(2.0, spec->order));
        break;
    case KERNEL_STRING:
        if (!(p[KPAR_TYPE] >= 1 && p[KPAR_TYPE] < STRING_TYPE_COUNT &&
              p[KPAR_TYPE] == floor(p[KPAR_TYPE])))
            error_argument("'kernel' program: unknown string kernel type %g", p[KPAR_TYPE]);
        if (!(p[KPAR_LENGTH] >= 1 && p[KPAR_LENGTH] <= 1e6))
            error_argument("'length' must be at least 1");
        if (!(p[KPAR_LAMBDA] > 0)) error_argument("'lambda' must be positive");
        spec->string_type = (int) p[KPAR_TYPE];
        spec->length = (int) p[KPAR_LENGTH];
        spec->lambda = p[KPAR_LAMBDA];
        spec->normalized = p[KPAR_NORMALIZED] != 0.0;
        break;
    default:
        break;
    }
}

/* Read and check the program list(ops, args, codes, kpar, nweights) that
 * fastkpca:::kernel_program() makes; everything points into R's vectors,
 * which the caller holds, or comes from R_alloc. */
void kernel_eval_from_R(SEXP program, kernel_eval *k)
{
    k->prep_threads = 1;
    if (!isNewList(program) || isNull(getAttrib(program, R_NamesSymbol)))
        error_argument("'kernel' must be a kernel program");
    SEXP ops = program_part(program, "ops"), args = program_part(program, "args");
    SEXP codes = program_part(program, "codes"), kpar = program_part(program, "kpar");
    SEXP nweights = program_part(program, "nweights");
    if (!isInteger(ops) || !isReal(args) || XLENGTH(ops) != XLENGTH(args) ||
        XLENGTH(ops) < 1 || XLENGTH(ops) > 100000)
        error_argument("'kernel' program: 'ops' and 'args' must be integer and double vectors "
                       "of one length");
    if (!isInteger(codes) || XLENGTH(codes) < 1 || XLENGTH(codes) > XLENGTH(ops))
        error_argument("'kernel' program: 'codes' must be an integer vector");
    if (!isReal(kpar) || XLENGTH(kpar) != (R_xlen_t) KPAR_COUNT * XLENGTH(codes))
        error_argument("'kernel' program: 'kpar' must hold %d doubles per base kernel", KPAR_COUNT);
    k->nops = (int) XLENGTH(ops);
    k->ops = INTEGER(ops);
    k->args = REAL(args);
    k->nbase = (int) XLENGTH(codes);
    k->nweights = as_count(nweights, "nweights", 0, k->nops);
    k->bases = (kernel_spec *) R_alloc((size_t) k->nbase, sizeof(kernel_spec));
    k->any_distance = k->any_inner = k->any_bessel = k->any_string = 0;
    k->bessel_order = 0.0;
    k->strings_indexed = k->fixed_first = 0;
    k->sparse = k->sparse_d = 0;
    k->n_fixed = k->n_moving = k->d = 0;
    k->fixed_set = k->moving_set = R_NilValue;
    k->fixed_rows = k->moving_rows = NULL;
    k->fixed_what = "x";
    for (int b = 0; b < k->nbase; b++) {
        kernel_spec *spec = k->bases + b;
        base_spec(INTEGER(codes)[b], REAL(kpar) + (size_t) b * KPAR_COUNT, spec);
        if (spec->code == KERNEL_STRING) k->any_string = 1;
        else if (kernel_is_distance(spec->code)) k->any_distance = 1;
        else k->any_inner = 1;
        if (spec->code == KERNEL_BESSEL) {
            k->any_bessel = 1;
            if (spec->order > k->bessel_order) k->bessel_order = spec->order;
        }
    }
    if (k->any_string && (k->any_distance || k->any_inner))
        error_argument("'kernel' program mixes string kernels with kernels on numbers");
    k->depth = program_depth(k);
}

/* The error for kernel values that are Inf or NaN (what: "" for the fit,
 * or "between 'newdata' and the training data " for predict). */
void kernel_nonfinite_error(const kernel_eval *k, const char *what)
{
    const char *hint = "the data give values too large (rescale the data)";
    if (k->any_string) {
        hint = "the kernel expression gives values too large (use smaller scales, "
            "powers or 'lambda')";
    } else if (k->nops > 1) {
        hint = "the kernel expression gives values too large (rescale the data, or "
            "use smaller scales, powers or parameters)";
    } else if (k->bases[0].code == KERNEL_POLY) {
        hint = "'kpar' gives values too large (try a smaller degree or scale)";
    } else if (k->bases[0].code == KERNEL_ANOVA) {
        hint = "'kpar' gives values too large (try a smaller degree)";
    }
    /* the argument whose values they are: 'x' for the fit (what "") */
    error_data("kernel values %sare not finite: %s%s", what, hint,
               *what ? "" : " (in 'x')");
}
