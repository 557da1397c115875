/* signature.h — forward's and backward's signatures as data, read once from the tree (by
 * find.c) and kept on the class: the only reader of a parameters node. Plan, check (P2S103-
 * P2S106, backward's gradients, ctx) and the language server (hover, symbols) read them. Also
 * the one binding of a call's arguments to forward's (check.c's P2S110-P2S113, the hover). A signature owns its text, and the names of its parameters are
 * spans of that text, so it travels with a class's export to modules that never see its
 * source. */
#ifndef P2S_SIGNATURE_H
#define P2S_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "source.h"

/* Python's parameter kinds (inspect.Parameter.kind), in the order a signature lists them. */
typedef enum {
    P2S_PARAM_POSITIONAL_ONLY,       /* before `/` */
    P2S_PARAM_POSITIONAL_OR_KEYWORD,
    P2S_PARAM_VAR_POSITIONAL,        /* *args */
    P2S_PARAM_KEYWORD_ONLY,          /* after `*` or *args */
    P2S_PARAM_VAR_KEYWORD,           /* **kwargs */
} P2sParamKind;

typedef struct {
    P2sParamKind kind;
    bool has_default;
    P2sSpan name;              /* in the signature's text, without `*` / `**` */
} P2sParam;

typedef struct {
    char *text;                /* forward's parameters on one line, as written (every run of
                                  whitespace one space): "ctx, x, k=2, *, n: int" */
    size_t after_ctx;          /* where the parameters after ctx start in text */
    P2sSpan ctx;               /* the first parameter's name in text when it has one (it
                                  receives ctx); empty otherwise */
    bool ctx_plain;            /* that parameter is a bare name: no annotation, no default */
    bool bindable;             /* a named ctx and @staticmethod forward's only decorator:
                                  calls bind to params as written */
    bool bare_star;            /* a bare `*` opens the keyword-only parameters */
    Array(P2sParam) params;    /* after ctx, in order (all of them when the first parameter
                                  takes no name: `*args` then receives ctx with the rest) */
} P2sSignature;

/* The signature of def (a function_definition) of src; only_staticmethod says its one
 * decorator is @staticmethod. The caller frees it (p2s_signature_free). */
P2sSignature *p2s_signature_read(const P2sSource *src, TSNode def, bool only_staticmethod);
P2sSignature *p2s_signature_copy(const P2sSignature *sig);
/* Whether two signatures (either may be NULL) bind every call alike. */
bool p2s_signature_same(const P2sSignature *a, const P2sSignature *b);
void p2s_signature_free(P2sSignature *sig);

/* The parameters node of a def, or a lambda's lambda_parameters, read for what binds names (find's
 * scopes) and whether it lists anything (the language server's P2S104 fix): how many parameters
 * it lists, comments and the `/` and `*` separators included (0 for a null node), and the node
 * that binds parameter i's names: a default or typed default parameter's name, else the parameter
 * itself (an identifier, a typed parameter, `*args`, `**kwargs`; a separator or a comment, which
 * binds nothing). */
uint32_t p2s_signature_param_count(TSNode params);
TSNode p2s_signature_param_target(TSNode params, uint32_t i);

/* Signatures, each owned (NULL entries allowed). */
typedef Array(P2sSignature *) P2sSignatures;
void p2s_signatures_release(P2sSignatures *self);

/* Whether the first parameter receives ctx: a named one, or `*args` (no parameter, a bare `*`
 * or `**kwargs` first cannot: P2S104). */
static inline bool p2s_signature_receives_ctx(const P2sSignature *sig)
{
    return sig->ctx.end > 0 || (sig->params.size && sig->params.contents[0].kind == P2S_PARAM_VAR_POSITIONAL);
}

/* The text of the parameters after ctx ("" when none). */
static inline const char *p2s_signature_accepted(const P2sSignature *sig)
{
    return sig->text + sig->after_ctx;
}

/* Whether a parameter's name is name[0..len). */
bool p2s_param_is(const P2sSignature *sig, const P2sParam *param, const char *name, size_t len);

/* Where one argument of a call goes. */
typedef enum {
    P2S_BOUND_PARAM,           /* to params[param] */
    P2S_BOUND_VAR_POSITIONAL,  /* into *args: params[param] */
    P2S_BOUND_VAR_KEYWORD,     /* into **kwargs: params[param] */
    P2S_BOUND_UNPACKED,        /* `*xs` / `**kw`: spread at run time */
    P2S_BOUND_AFTER_UNPACKED,  /* positional after a `*xs`: where it lands depends on xs */
    P2S_BOUND_EXTRA,           /* positional past every parameter that takes one (P2S111) */
    P2S_BOUND_NO_KEYWORD,      /* a keyword no parameter takes, positional-only ones
                                  included (P2S110) */
    P2S_BOUND_DUPLICATE,       /* a keyword for params[param], already bound (P2S113) */
} P2sBoundKind;

typedef struct {
    TSNode argument;           /* the argument node (a keyword_argument for keywords) */
    P2sBoundKind kind;
    size_t param;              /* for PARAM, VAR_POSITIONAL, VAR_KEYWORD, DUPLICATE; else SIZE_MAX */
} P2sBoundArgument;

typedef struct {
    Array(P2sBoundArgument) arguments;   /* the call's, in order, comments left out */
    size_t positional;         /* positional arguments given, `*xs` not counted */
    size_t capacity;           /* parameters that take a position */
    size_t required;           /* of those, the ones without a default */
    bool list_unpacked;        /* a `*xs` argument: how many positional arguments is unknown */
    bool dict_unpacked;        /* a `**kw` argument */
    size_t missing;            /* the first required parameter nothing binds, known only when
                                  nothing is unpacked; SIZE_MAX when none */
} P2sBinding;

/* Binds the arguments of an argument_list node of src to sig, as Python does. */
void p2s_bind(const P2sSource *src, const P2sSignature *sig, TSNode arguments, P2sBinding *out);
void p2s_binding_release(P2sBinding *self);

#endif
