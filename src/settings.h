/* settings.h — the settings of a run, merged the one way the command line and the language
 * server share: the caller's own settings (the command line's options, or the client's) over
 * the configuration file's `[tool.pylayer2static]`. The configuration is the caller's explicit
 * file, else the nearest pyproject.toml with that table. Rules: the built-in ones, then the
 * configuration's rules files, then the caller's. Selection: the caller's `select` replaces the
 * configuration's select and ignore; ignore and warn add up, the configuration's first; warn
 * applies after every rules file, so it lowers the severities they set. Tree mode's walk (the
 * command line's tree runs, the language server's workspace index): the caller's excludes, then
 * the configuration's; the caller's jobs, else the configuration's. */
#ifndef P2S_SETTINGS_H
#define P2S_SETTINGS_H

#include <stdbool.h>

#include "array.h"
#include "config.h"
#include "rules.h"
#include "strbuf.h"

typedef struct {
    char *config;               /* a pyproject.toml to read instead of the nearest; NULL: none */
    bool no_config;             /* read no configuration file */
    P2sStrings rules_files;     /* read after the configuration's */
    P2sStrings select, ignore, warn;   /* each item a comma-separated list of selectors */
    bool select_given;
    bool command_line;          /* selection errors name the command line's options
                                   (`pylayer2static: error: --select: ...`), else the client's
                                   settings keys (`select: ...`) */
} P2sSettings;

/* What a walk of a source tree reads of the merged settings. The excludes are borrowed from the
 * caller's list and the configuration; release with array_delete. */
typedef struct {
    P2sStringList excludes;
    unsigned jobs;              /* 0: neither says (as many as the machine has) */
} P2sWalkSettings;

void p2s_settings_release(P2sSettings *self);
/* The configuration file for inputs in dir (NULL: an input in no directory); NULL when there
 * is none or none is to be read. Caller frees. */
char *p2s_settings_config_path(const P2sSettings *self, const char *dir);
/* Reads config_path (NULL: no configuration; config is left empty) into config, then the
 * rules as merged above into rules. Returns 0, or -1 with the reason in err. */
int  p2s_settings_load(const P2sSettings *self, const char *config_path, P2sConfig *config, P2sRules *rules,
                       P2sStrbuf *err);

/* The settings merged with one configuration file (config_path NULL: none): its configuration
 * and the rules, for the inputs (the command line) or the documents and workspace folders (the
 * language server) it governs. */
typedef struct {
    char *config_path;
    P2sConfig config;           /* empty when it could not be read */
    P2sRules rules;
} P2sFileSettings;

/* The settings of each configuration file asked for, each read once; an entry stays where it
 * is until the cache is released. */
typedef Array(P2sFileSettings *) P2sSettingsCache;

/* The settings merged with config_path (NULL: no configuration file), read into cache
 * (p2s_settings_load) the first time that path is asked for. Returns 0 with *out the entry;
 * -1 when it was just read and could not be: the reason in err, *out an entry with no
 * configuration and the built-in rules, kept so that a caller that goes on is told once. */
int  p2s_settings_for(const P2sSettings *self, P2sSettingsCache *cache, const char *config_path,
                      const P2sFileSettings **out, P2sStrbuf *err);
void p2s_settings_cache_release(P2sSettingsCache *cache);

/* The walk settings of a tree run: excludes (may be NULL) and jobs (0: not given) are the
 * caller's, config the configuration read for the tree (may be empty). */
void p2s_settings_walk(const P2sStringList *excludes, unsigned jobs, const P2sConfig *config, P2sWalkSettings *out);

#endif
