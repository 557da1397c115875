/* scope.h — find's walk and name resolution: one walk over a module's tree records every scope
 * (module, class body, function, lambda) with the names it binds, every class and every `X.apply`
 * attribute; a name or dotted expression then resolves to what it means there, by Python's
 * rules. Shared by scope.c (the walk, resolution) and find.c (which PyLayers, sites and exports
 * that makes): P2sFinder is find's state while it runs. The finder owns its scopes (released by
 * p2s_scope_release); classes and misses go to the caller's findings. */
#ifndef P2S_SCOPE_H
#define P2S_SCOPE_H

#include <stdbool.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "findings.h"
#include "nameset.h"
#include "rules.h"
#include "source.h"

#define P2S_SCOPE_ALIAS_DEPTH 8       /* aliases followed, and bases climbed, at most */
#define P2S_NO_SCOPE SIZE_MAX         /* the module scope's parent */
#define P2S_NO_BINDING SIZE_MAX       /* no binding of a name in a scope */

typedef enum { P2S_SCOPE_MODULE, P2S_SCOPE_CLASS, P2S_SCOPE_FUNCTION } P2sScopeKind;
typedef enum { P2S_BIND_MODULE, P2S_BIND_CLASS, P2S_BIND_ALIAS, P2S_BIND_OTHER } P2sBindKind;

/* A big module has a binding per name per scope, alive all through finding: kept small (what
 * only one kind needs shares one word; an alias's expression lives in P2sFinder.alias_values). */
typedef struct {
    P2sSpan name;
    size_t previous;       /* the scope's binding of the same name before this one, or P2S_NO_BINDING */
    size_t position;       /* the name is bound once execution passes this offset */
    P2sBindKind kind;
    union {
        char *target;      /* P2S_BIND_MODULE: the qualified name it stands for, owned */
        size_t class_index;  /* P2S_BIND_CLASS */
        size_t alias;      /* P2S_BIND_ALIAS: the expression it was assigned, in P2sFinder.alias_values */
    } as;
} P2sScopeBinding;

typedef struct {
    P2sScopeKind kind;
    TSNode owner;          /* module, class_definition, function_definition or lambda */
    size_t parent;
    size_t class_index;    /* P2S_SCOPE_CLASS */
    Array(P2sScopeBinding) bindings;
    P2sNameSet last;       /* name -> its last binding, whose `previous` chain has the others */
    Array(size_t) names;   /* the first binding of each name, in source order */
} P2sScope;

typedef struct {
    TSNode attribute;
    TSNode parent;         /* kept from the walk: ts_node_parent walks down from the root */
    size_t scope;
} P2sCandidate;

typedef struct {
    const P2sSource *src;
    const TSTree *tree;
    const P2sRules *rules;
    const P2sModule *module;
    P2sFindings *out;
    Array(P2sScope) scopes;
    Array(size_t) stack;           /* scopes being walked */
    Array(size_t) class_scope;     /* class index -> its scope */
    Array(size_t) class_outer;     /* class index -> the scope its name is bound in */
    Array(P2sCandidate) candidates;
    Array(TSNode) alias_values;
    Array(const char *) api_words; /* the rules' paddle_api_words this source spells (the rules
                                      own them): a function body that spells one is walked */
    bool records_misses;           /* false while a phase whose misses the run never reads */
    bool records_export_misses;    /* exports' misses, kept by name too */
    P2sMissWhere miss_where;       /* what the phase that runs looks names up for */
} P2sFinder;

typedef enum { P2S_MEANING_NONE, P2S_MEANING_QUAL, P2S_MEANING_CLASS } P2sMeaningKind;

typedef struct {
    P2sMeaningKind kind;
    char *qual;            /* P2S_MEANING_QUAL, owned */
    size_t class_index;    /* P2S_MEANING_CLASS */
} P2sMeaning;

/* What find.c asks of the scopes (each exported for it, its one caller besides scope.c). */
/* Whether node's text is exactly text. */
bool p2s_scope_text_is(const P2sFinder *f, TSNode node, const char *text);
/* Whether node's grammar type is type. */
bool p2s_scope_type_is(TSNode node, const char *type);
/* A new scope owned by owner, nested in parent (P2S_NO_SCOPE for the module's); its index. */
size_t p2s_scope_new(P2sFinder *f, P2sScopeKind kind, TSNode owner, size_t parent);
/* The walk from root (the module scope on f->stack): scopes and bindings, classes (into
 * f->out->classes) and `.apply` candidates. Goes round subtrees that cannot matter (f->api_words
 * says which words make a function body matter besides `apply` and `class`). */
void p2s_scope_walk(P2sFinder *f, TSNode root);
/* The last binding of name in a scope (P2S_NO_BINDING if none); follow `previous` for the others. */
size_t p2s_scope_last_binding(const P2sFinder *f, const P2sScope *sc, P2sSpan name);
/* Looks name up from scope at position (see scope.c's header comment for the rules); depth
 * counts the aliases followed. The caller releases the meaning. */
P2sMeaning p2s_scope_lookup(const P2sFinder *f, P2sSpan name, size_t scope, size_t position, int depth);
/* What an identifier, `a.b.c` or a parenthesized one of them means at position in scope. */
P2sMeaning p2s_scope_resolve(const P2sFinder *f, TSNode expr, size_t scope, size_t position, int depth);
void p2s_scope_meaning_release(P2sMeaning *m);
/* A PyLayer class that another module of the tree defines; a miss recorded when it is not
 * (while f->records_misses), so the module is found again should one appear. */
bool p2s_scope_is_external(const P2sFinder *f, const P2sMeaning *m);
/* Whether m is a PyLayer base: of the rules, another module's PyLayer, or a PyLayer of this file. */
bool p2s_scope_is_pylayer_base(const P2sFinder *f, const P2sMeaning *m);
/* Frees the walk's state (scopes, stack, candidates): the findings outlive it. */
void p2s_scope_release(P2sFinder *f);

#endif
