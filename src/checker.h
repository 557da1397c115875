/* checker.h — the state of one file's check and what every check reads of it, shared by
 * check.c (the class contract, P2S101-P2S109, and the hazards, P2S2xx) and check_sites.c (the
 * `.apply` sites and what is left as written, P2S110-P2S113, P2S300-P2S302): the file's classes
 * indexed by spelling, each forward/backward collected once (P2sCheckMethod: what one looks
 * like from the outside), and findings emitted once, marking what they leave as written. The
 * checker owns its methods and indexes (p2s_checker_release); the findings are the caller's. */
#ifndef P2S_CHECKER_H
#define P2S_CHECKER_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "diag.h"
#include "findings.h"
#include "nameset.h"
#include "parse.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"

typedef struct {
    char code[8];
    P2sSpan span;
    bool leaves;                 /* shown, and of a code that leaves its owner as written */
} P2sCheckEmitted;

typedef struct {
    const P2sSource *src;
    P2sFindings *found;
    const P2sRules *rules;
    P2sDiagSink *sink;
    bool *owner;                 /* as_written of the class or site being checked */
    P2sNameSet by_qualname, by_name;   /* the file's classes: first index of each spelling */
    Array(unsigned char) subclassed;   /* per class: a class of the file derives from it */
    Array(unsigned char) applied;      /* per class: a `.apply` of the file names it */
    Array(P2sCheckEmitted) emitted;      /* (code, span) already reported: shared bases are seen twice */
    Array(struct P2sCheckMethod *) methods;  /* every forward/backward looked at, each collected once
                                        (a base's are shared by its subclasses and every site):
                                        2 * owner class + 0 / 1 for forward / backward, then
                                        the two absent ones; NULL until asked for */
} P2sChecker;

typedef Array(TSNode) P2sNodeList;

/* A name's text: an identifier's in the source, or a parameter's in its signature. */
typedef struct {
    const char *text;
    size_t len;
} P2sCheckName;

/* What one forward or backward looks like from the outside. */
typedef struct P2sCheckMethod {
    TSNode def;                  /* function_definition; null node when absent */
    const char *where;           /* "forward" / "backward" */
    unsigned bit;                /* P2S_IN_FORWARD / P2S_IN_BACKWARD */
    size_t owner;                /* the class whose body holds def */
    P2sNodeList decorators;         /* its decorators, as expressions */
    const P2sSignature *sig;     /* def's signature (find.c read it for the class); NULL when absent */
    P2sNodeList returns;            /* return statements of this function (not nested ones) */
    P2sNodeList ctx_calls;          /* calls `ctx.<method from the table>(...)`, not in nested defs */
    Array(unsigned char) ctx_call_straight;  /* each one lies on the straight-line path */
    Array(P2sCheckName) tensors;    /* names certainly bound to a Tensor */
    P2sNodeList calls;              /* every call in its body, nested ones too (the hazards) */
    bool ctx_escapes;            /* ctx is used other than as `ctx.attr` (passed on, aliased) */
    bool mentions_save;          /* some `.save_for_backward`-like attribute appears anywhere */
    bool generator;              /* contains yield: returns say nothing about outputs */
} P2sCheckMethod;

/* A checker over found (whose classes and sites the checks mark as written), emitting into sink. */
void p2s_checker_init(P2sChecker *ck, const P2sSource *src, P2sFindings *found, const P2sRules *rules,
                      P2sDiagSink *sink);
void p2s_checker_release(P2sChecker *ck);

/* What the checks read, exported for check.c and check_sites.c. */
/* Whether node is of kind (p2s_kind). */
bool p2s_checker_type_is(TSNode node, P2sKind kind);
/* Whether node's text is exactly text[0..n). */
bool p2s_checker_text_is(const P2sChecker *ck, TSNode node, const char *text, size_t n);
/* Looks through parentheses: `((x))` is `x`. */
TSNode p2s_checker_unparen(TSNode node);
/* Reports a finding once, and leaves the class or site being checked as written when the
 * finding says so (a base's finding, reported when the base was checked, counts for each
 * subclass that inherits the method too). */
void p2s_checker_emit(P2sChecker *ck, const char *code, P2sSpan span, const char *const *kv, size_t npairs);
/* The file's class at index. */
const P2sPyLayerClass *p2s_checker_class(const P2sChecker *ck, size_t index);
/* The local class a base expression names (by its qualified or simple name), or SIZE_MAX:
 * the first class of the file spelled so. */
size_t p2s_checker_local_class(const P2sChecker *ck, TSNode base);
/* The class as messages name it: its qualified name, else its name. */
void p2s_checker_class_name(const P2sChecker *ck, size_t index, P2sStrbuf *out);
/* Whether the method's first parameter has a name (the ctx the checks follow). */
bool p2s_checker_has_ctx(const P2sCheckMethod *m);
/* `ctx.<name>(...)` with name in the ctx method table: the table entry, else NULL. */
const P2sCtxMethod *p2s_checker_ctx_call(const P2sChecker *ck, const P2sCheckMethod *m, TSNode call);
/* forward (bit P2S_IN_FORWARD) or backward of a class, collected the first time any class or
 * site asks for it. */
const P2sCheckMethod *p2s_checker_method(P2sChecker *ck, size_t index, unsigned bit);
/* True when the method carries @staticmethod and nothing else that could change its signature. */
bool p2s_checker_only_staticmethod(const P2sChecker *ck, const P2sCheckMethod *m);
/* Whether node is a name the method certainly binds to a Tensor. */
bool p2s_checker_is_tensor_name(const P2sChecker *ck, const P2sCheckMethod *m, TSNode node);

#endif
