/* GStreamer SPDL: AWS credentials and profile settings, as botocore finds them
 * Copyright (C) 2026 gst-spdl authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2 of the License, or (at your option) any later version.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstspdlawscredentials.h"
#include "gstspdlawserror.h"
#include "gstspdlsigv4.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

GST_DEBUG_CATEGORY_STATIC (spdl_aws_debug);
#define GST_CAT_DEFAULT spdl_aws_debug

/* Bounds on what is read: the files are the user's, the HTTP answers come
 * from whatever listens on the metadata addresses. */
#define MAX_FILE_SIZE (1024 * 1024)
#define MAX_TOKEN_FILE_SIZE (16 * 1024)
#define MAX_BODY_SIZE (64 * 1024)
#define MAX_JSON_DEPTH 32
#define MAX_EXPIRATION_LEN 64

#define FAILURE_RETRY_US (30 * G_USEC_PER_SEC)
/* how often a cancelled lookup notices it */
#define CANCEL_POLL_US (50 * 1000)

/* botocore's ContainerMetadataFetcher */
#define CONTAINER_HOST "169.254.170.2"
#define CONTAINER_TIMEOUT_MS 2000
#define CONTAINER_ATTEMPTS 3

/* botocore's IMDSFetcher and InstanceMetadataFetcher */
#define IMDS_ENDPOINT "http://169.254.169.254/"
#define IMDS_ENDPOINT_IPV6 "http://[fd00:ec2::254]/"
#define IMDS_TOKEN_PATH "latest/api/token"
#define IMDS_TOKEN_TTL "21600"
#define IMDS_ROLE_PATH "latest/meta-data/iam/security-credentials/"
#define IMDS_MAX_ROLE_LEN 128
#define IMDS_MAX_TOKEN_LEN 4096

#define PROPERTIES "the spdlsrc properties"

static gpointer
init_once (gpointer data)
{
  GST_DEBUG_CATEGORY_INIT (spdl_aws_debug, "spdlawscredentials", 0,
      "SPDL AWS credentials");
  return GINT_TO_POINTER (curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK);
}

/* whether libcurl is usable */
static gboolean
init (void)
{
  static GOnce once = G_ONCE_INIT;

  return GPOINTER_TO_INT (g_once (&once, init_once, NULL));
}

/* a secret: not left in freed memory */
static void
clear_secret (gchar ** secret)
{
  if (*secret) {
    memset (*secret, 0, strlen (*secret));
    g_clear_pointer (secret, g_free);
  }
}

GstSpdlAwsCredentials *
gst_spdl_aws_credentials_copy (const GstSpdlAwsCredentials * c)
{
  GstSpdlAwsCredentials *copy;

  if (c == NULL)
    return NULL;
  copy = g_new0 (GstSpdlAwsCredentials, 1);
  copy->access_key = g_strdup (c->access_key);
  copy->secret_key = g_strdup (c->secret_key);
  copy->session_token = g_strdup (c->session_token);
  copy->expiration = c->expiration;
  copy->source = g_strdup (c->source);
  return copy;
}

void
gst_spdl_aws_credentials_free (GstSpdlAwsCredentials * c)
{
  if (c == NULL)
    return;
  clear_secret (&c->access_key);
  clear_secret (&c->secret_key);
  clear_secret (&c->session_token);
  g_free (c->source);
  g_free (c);
}

/* They go into HTTP headers and signatures: visible ASCII only, which
 * every AWS key, secret and token is. */
static gboolean
is_visible_ascii (const gchar * s)
{
  if (s == NULL || *s == '\0')
    return FALSE;
  for (; *s; s++) {
    if ((guchar) * s <= 0x20 || (guchar) * s >= 0x7f)
      return FALSE;
  }
  return TRUE;
}

/* NULL if they are usable, else which one is not */
static const gchar *
credentials_invalid (const gchar * key, const gchar * secret,
    const gchar * token)
{
  if (!is_visible_ascii (key))
    return "access key";
  if (!is_visible_ascii (secret))
    return "secret key";
  if (token && !is_visible_ascii (token))
    return "session token";
  return NULL;
}

static GstSpdlAwsCredentials *
credentials_new (const gchar * key, const gchar * secret, const gchar * token,
    gint64 expiration, gchar * source)
{
  GstSpdlAwsCredentials *c = g_new0 (GstSpdlAwsCredentials, 1);

  c->access_key = g_strdup (key);
  c->secret_key = g_strdup (secret);
  c->session_token = token && *token ? g_strdup (token) : NULL;
  c->expiration = expiration;
  c->source = source;
  return c;
}

/* "2026-01-02T03:04:05Z" (any ISO 8601 with a time; UTC without a zone)
 * -> unix seconds */
static gboolean
parse_expiration (const gchar * text, gint64 * expiration)
{
  GTimeZone *utc;
  GDateTime *dt;

  if (text == NULL || strlen (text) > MAX_EXPIRATION_LEN)
    return FALSE;
  utc = g_time_zone_new_utc ();
  dt = g_date_time_new_from_iso8601 (text, utc);
  g_time_zone_unref (utc);
  if (dt == NULL)
    return FALSE;
  *expiration = g_date_time_to_unix (dt);
  g_date_time_unref (dt);
  /* 0 means "does not expire" */
  if (*expiration <= 0)
    *expiration = 1;
  return TRUE;
}

static gint64
now_s (void)
{
  return g_get_real_time () / G_USEC_PER_SEC;
}

/* ---- Files ---- */

/* ~ and ~/... as Python's os.path.expanduser: $HOME first */
static gchar *
expand_home (const gchar * path)
{
  const gchar *home = g_getenv ("HOME");

  if (home == NULL || *home == '\0')
    home = g_get_home_dir ();
  if (g_strcmp0 (path, "~") == 0)
    return g_strdup (home);
  if (g_str_has_prefix (path, "~/"))
    return g_build_filename (home, path + 2, NULL);
  return g_strdup (path);
}

/* A regular file's bytes, NUL-terminated, up to @max; NULL with @why.
 * Sized from fstat so that no reallocation leaves copies of a secret. */
static gchar *
read_file_bounded (const gchar * path, gsize max, gsize * len, gchar ** why)
{
  /* non-blocking: a FIFO named as a credentials file must not hang the
   * I/O thread in open(); it is refused as not a regular file below */
  gint fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  FILE *f = fd >= 0 ? fdopen (fd, "rb") : NULL;
  struct stat st;
  gchar *data;
  gsize size, n;

  if (f == NULL) {
    *why = g_strdup (errno == ENOENT ? "no such file" : g_strerror (errno));
    if (fd >= 0)
      close (fd);
    return NULL;
  }
  if (fstat (fileno (f), &st) != 0 || !S_ISREG (st.st_mode)) {
    *why = g_strdup ("not a regular file");
    fclose (f);
    return NULL;
  }
  if ((guint64) st.st_size > max) {
    *why = g_strdup_printf ("larger than %" G_GSIZE_FORMAT " bytes", max);
    fclose (f);
    return NULL;
  }
  size = st.st_size;
  data = g_malloc (size + 1);
  n = fread (data, 1, size, f);
  if (ferror (f)) {
    *why = g_strdup (g_strerror (errno));
    memset (data, 0, size);
    g_free (data);
    fclose (f);
    return NULL;
  }
  fclose (f);
  data[n] = '\0';
  *len = n;
  return data;
}

/* ---- INI files, as Python's configparser.RawConfigParser reads them and
 * botocore's configloader interprets them ---- */

typedef struct
{
  gchar *key;                   /* lowercase (configparser's optionxform) */
  gchar *value;
  GPtrArray *block;             /* IniEntry: the "key = value" lines indented
                                 * under an empty value, else NULL */
} IniEntry;

typedef struct
{
  gchar *name;
  GPtrArray *entries;
} IniSection;

static void
ini_entry_free (IniEntry * e)
{
  g_free (e->key);
  clear_secret (&e->value);
  if (e->block)
    g_ptr_array_unref (e->block);
  g_free (e);
}

static void
ini_section_free (IniSection * s)
{
  g_free (s->name);
  g_ptr_array_unref (s->entries);
  g_free (s);
}

static IniEntry *
ini_entry_new (const gchar * key, gsize key_len, const gchar * value,
    gsize value_len)
{
  IniEntry *e = g_new0 (IniEntry, 1);

  e->key = g_strndup (key, key_len);
  e->value = g_strndup (value, value_len);
  return e;
}

static void
strip_range (const gchar ** s, const gchar ** e)
{
  while (*s < *e && g_ascii_isspace (**s))
    (*s)++;
  while (*e > *s && g_ascii_isspace ((*e)[-1]))
    (*e)--;
}

/* A line indented below an option. After an empty value it is a line of a
 * nested block ("s3 =\n  endpoint_url = ..."), split at its first '='
 * only, the key kept as written (botocore's _parse_nested); otherwise it
 * continues a multi-line value. */
static void
ini_continue (IniEntry * entry, const gchar * s, const gchar * e)
{
  if (entry->block || entry->value[0] == '\0') {
    const gchar *eq = memchr (s, '=', e - s);
    const gchar *ks = s, *ke = eq, *vs, *ve = e;

    if (entry->block == NULL)
      entry->block = g_ptr_array_new_with_free_func ((GDestroyNotify)
          ini_entry_free);
    /* botocore rejects the whole file for such a line: skipped here */
    if (eq == NULL)
      return;
    vs = eq + 1;
    strip_range (&ks, &ke);
    strip_range (&vs, &ve);
    g_ptr_array_add (entry->block, ini_entry_new (ks, ke - ks, vs, ve - vs));
  } else {
    gchar *line = g_strndup (s, e - s);
    gchar *value = g_strconcat (entry->value, "\n", line, NULL);

    clear_secret (&line);
    clear_secret (&entry->value);
    entry->value = value;
  }
}

/* "key = value" or "key: value", split at the first '=' or ':' */
static IniEntry *
ini_option (const gchar * s, const gchar * e)
{
  const gchar *d = s, *ks = s, *ke, *vs, *ve = e;
  IniEntry *entry;

  while (d < e && *d != '=' && *d != ':')
    d++;
  if (d == e)
    return NULL;
  ke = d;
  vs = d + 1;
  strip_range (&ks, &ke);
  strip_range (&vs, &ve);
  if (ks == ke)
    return NULL;
  entry = g_new0 (IniEntry, 1);
  entry->key = g_ascii_strdown (ks, ke - ks);
  entry->value = g_strndup (vs, ve - vs);
  return entry;
}

/* Sections in file order. Comments are whole lines starting with # or ;
 * (also indented); "key = value # text" keeps "# text" in the value, as
 * configparser does. What configparser rejects (lines outside sections,
 * lines without a delimiter) is skipped; duplicates are kept, lookups take
 * the last. */
static GPtrArray *
ini_parse (const gchar * text)
{
  GPtrArray *sections = g_ptr_array_new_with_free_func ((GDestroyNotify)
      ini_section_free);
  IniSection *section = NULL;
  IniEntry *entry = NULL;       /* the option indented lines continue */
  gsize entry_indent = 0;
  const gchar *line = text;

  /* a UTF-8 byte order mark, as some Windows editors write */
  if (g_str_has_prefix (line, "\xef\xbb\xbf"))
    line += 3;
  while (*line) {
    const gchar *eol = strchr (line, '\n');
    const gchar *s = line, *e;
    gsize indent;

    if (eol == NULL)
      eol = line + strlen (line);
    e = eol;
    strip_range (&s, &e);
    indent = s - line;
    line = *eol ? eol + 1 : eol;
    /* blank lines and comments do not end a multi-line value */
    if (s == e || *s == '#' || *s == ';')
      continue;
    if (entry && indent > entry_indent) {
      ini_continue (entry, s, e);
      continue;
    }
    entry = NULL;
    if (*s == '[') {
      const gchar *close = e - 1;

      while (close > s && *close != ']')
        close--;
      if (close > s + 1) {
        section = g_new0 (IniSection, 1);
        section->name = g_strndup (s + 1, close - s - 1);
        section->entries = g_ptr_array_new_with_free_func ((GDestroyNotify)
            ini_entry_free);
        g_ptr_array_add (sections, section);
        continue;
      }
    }
    if (section && (entry = ini_option (s, e))) {
      g_ptr_array_add (section->entries, entry);
      entry_indent = indent;
    }
  }
  return sections;
}

/* the last [name] */
static IniSection *
ini_section (GPtrArray * sections, const gchar * name)
{
  guint i;

  for (i = sections ? sections->len : 0; i > 0; i--) {
    IniSection *s = g_ptr_array_index (sections, i - 1);

    if (strcmp (s->name, name) == 0)
      return s;
  }
  return NULL;
}

static IniEntry *
ini_entry (GPtrArray * entries, const gchar * key)
{
  guint i;

  for (i = entries ? entries->len : 0; i > 0; i--) {
    IniEntry *e = g_ptr_array_index (entries, i - 1);

    if (strcmp (e->key, key) == 0)
      return e;
  }
  return NULL;
}

/* a plain (not nested) value, NULL if absent or empty */
static const gchar *
ini_value (IniSection * section, const gchar * key)
{
  IniEntry *e = section ? ini_entry (section->entries, key) : NULL;

  if (e == NULL || e->block || e->value[0] == '\0')
    return NULL;
  return e->value;
}

/* Python's shlex.split (posix, no comments): words split at whitespace,
 * '...' and "..." quoting, backslash escapes; NULL where shlex raises */
static gchar **
shlex_split (const gchar * s)
{
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  GString *word = NULL;

  while (*s) {
    if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
      if (word)
        g_ptr_array_add (words, g_string_free (word, FALSE));
      word = NULL;
      s++;
      continue;
    }
    if (word == NULL)
      word = g_string_new (NULL);
    if (*s == '\'' || *s == '"') {
      gchar quote = *s++;

      while (*s && *s != quote) {
        if (quote == '"' && *s == '\\' && (s[1] == '"' || s[1] == '\\'))
          s++;
        g_string_append_c (word, *s++);
      }
      if (*s == '\0')
        goto unbalanced;
      s++;
    } else if (*s == '\\') {
      if (s[1] == '\0')
        goto unbalanced;
      g_string_append_c (word, s[1]);
      s += 2;
    } else {
      g_string_append_c (word, *s++);
    }
  }
  if (word)
    g_ptr_array_add (words, g_string_free (word, FALSE));
  g_ptr_array_add (words, NULL);
  return (gchar **) g_ptr_array_free (words, FALSE);

unbalanced:
  g_string_free (word, TRUE);
  g_ptr_array_unref (words);
  return NULL;
}

/* botocore's build_profile_map: a section "PREFIX NAME" (shlex words; the
 * first only has to start with PREFIX) names NAME */
static gboolean
section_is (const IniSection * section, const gchar * prefix,
    const gchar * name)
{
  gchar **words;
  gboolean is;

  if (!g_str_has_prefix (section->name, prefix))
    return FALSE;
  words = shlex_split (section->name);
  is = words && g_strv_length (words) == 2 && strcmp (words[1], name) == 0;
  g_strfreev (words);
  return is;
}

/* The config file's section of a profile: "[profile NAME]", or "[default]"
 * for "default"; the last one wins, as in botocore's dict. */
static IniSection *
config_profile_section (GPtrArray * sections, const gchar * profile)
{
  guint i;

  for (i = sections ? sections->len : 0; i > 0; i--) {
    IniSection *s = g_ptr_array_index (sections, i - 1);

    if ((strcmp (profile, "default") == 0 && strcmp (s->name, "default") == 0)
        || section_is (s, "profile", profile))
      return s;
  }
  return NULL;
}

/* ---- The profile: its name, both files ---- */

typedef struct
{
  gchar *name;
  const gchar *named_by;        /* NULL: "default" by default */
  gchar *creds_path;
  gchar *config_path;
  GPtrArray *creds;             /* sections; NULL: see creds_why */
  GPtrArray *config;
  gchar *creds_why;
  gchar *config_why;
  IniSection *creds_section;    /* the profile's, or NULL */
  IniSection *config_section;
} Profile;

static GPtrArray *
load_ini (const gchar * path, gchar ** why)
{
  gsize len = 0;
  gchar *text = read_file_bounded (path, MAX_FILE_SIZE, &len, why);
  GPtrArray *sections;

  if (text == NULL)
    return NULL;
  /* configparser reads text: a NUL byte ends it here */
  sections = ini_parse (text);
  memset (text, 0, len);
  g_free (text);
  return sections;
}

static const gchar *
env (const gchar * name)
{
  const gchar *value = g_getenv (name);

  return value && *value ? value : NULL;
}

/* botocore's "profile" setting: the session's, AWS_DEFAULT_PROFILE, then
 * AWS_PROFILE */
static void
profile_load (Profile * p, const gchar * explicit_name)
{
  const gchar *path;

  memset (p, 0, sizeof (*p));
  if (explicit_name && *explicit_name) {
    p->name = g_strdup (explicit_name);
    p->named_by = PROPERTIES;
  } else if (env ("AWS_DEFAULT_PROFILE")) {
    p->name = g_strdup (env ("AWS_DEFAULT_PROFILE"));
    p->named_by = "AWS_DEFAULT_PROFILE";
  } else if (env ("AWS_PROFILE")) {
    p->name = g_strdup (env ("AWS_PROFILE"));
    p->named_by = "AWS_PROFILE";
  } else {
    p->name = g_strdup ("default");
  }
  path = env ("AWS_SHARED_CREDENTIALS_FILE");
  p->creds_path = expand_home (path ? path : "~/.aws/credentials");
  path = env ("AWS_CONFIG_FILE");
  p->config_path = expand_home (path ? path : "~/.aws/config");
  p->creds = load_ini (p->creds_path, &p->creds_why);
  p->config = load_ini (p->config_path, &p->config_why);
  p->creds_section = ini_section (p->creds, p->name);
  p->config_section = config_profile_section (p->config, p->name);
}

static void
profile_clear (Profile * p)
{
  g_free (p->name);
  g_free (p->creds_path);
  g_free (p->config_path);
  if (p->creds)
    g_ptr_array_unref (p->creds);
  if (p->config)
    g_ptr_array_unref (p->config);
  g_free (p->creds_why);
  g_free (p->config_why);
}

/* botocore's merged profile: the config file's section, updated with the
 * credentials file's (Session.full_config) */
static const gchar *
profile_value (const Profile * p, const gchar * key)
{
  const gchar *value = ini_value (p->creds_section, key);

  return value ? value : ini_value (p->config_section, key);
}

/* a setting botocore takes from the environment, else the profile */
static const gchar *
setting (const Profile * p, const gchar * env_name, const gchar * key)
{
  const gchar *value = env (env_name);

  return value ? value : profile_value (p, key);
}

static gboolean
setting_is_true (const Profile * p, const gchar * env_name,
    const gchar * key)
{
  const gchar *value = setting (p, env_name, key);

  return value && g_ascii_strcasecmp (value, "true") == 0;
}

/* ConfiguredEndpointProvider without the environment: the services
 * section's block of @service ("s3", "sts"), then the profile's
 * endpoint_url */
static const gchar *
profile_endpoint_url (const Profile * p, const gchar * service)
{
  const gchar *services = profile_value (p, "services");

  if (setting_is_true (p, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
          "ignore_configured_endpoint_urls"))
    return NULL;
  if (services) {
    IniSection *section = NULL;
    IniEntry *block, *url;
    guint i;

    for (i = p->config ? p->config->len : 0; i > 0 && !section; i--) {
      IniSection *s = g_ptr_array_index (p->config, i - 1);

      if (section_is (s, "services", services))
        section = s;
    }
    /* botocore raises InvalidConfigError */
    if (section == NULL)
      GST_WARNING ("profile \"%s\" names the services section \"%s\", "
          "which %s does not have", p->name, services, p->config_path);
    block = section ? ini_entry (section->entries, service) : NULL;
    url = block ? ini_entry (block->block, "endpoint_url") : NULL;
    if (url && url->value[0])
      return url->value;
  }
  return profile_value (p, "endpoint_url");
}

gchar *
gst_spdl_aws_profile_get (const gchar * profile, const gchar * key)
{
  Profile p;
  gchar *value;

  g_return_val_if_fail (key != NULL, NULL);
  init ();
  profile_load (&p, profile);
  if (strcmp (key, "endpoint_url") == 0)
    value = g_strdup (profile_endpoint_url (&p, "s3"));
  else
    value = g_strdup (profile_value (&p, key));
  profile_clear (&p);
  return value;
}

/* ---- JSON: the flat objects of strings the metadata services answer;
 * anything else valid is skipped, nesting bounded ---- */

typedef struct
{
  const gchar *p;
  const gchar *end;
} Json;

static void
json_space (Json * j)
{
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n'
          || *j->p == '\r'))
    j->p++;
}

static gint
json_hex4 (const gchar * s)
{
  gint v = 0, i;

  for (i = 0; i < 4; i++) {
    gint d = g_ascii_xdigit_value (s[i]);

    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

/* A string at j->p, decoded into a new string of its own size (so no copy
 * of a secret is left by a reallocation) when @out is not NULL. */
static gboolean
json_string (Json * j, gchar ** out)
{
  const gchar *s, *q;
  gchar *d, *decoded;

  if (j->p >= j->end || *j->p != '"')
    return FALSE;
  /* the closing quote; raw control characters are not JSON */
  for (q = j->p + 1; q < j->end && *q != '"'; q++) {
    if ((guchar) * q < 0x20)
      return FALSE;
    if (*q == '\\' && ++q == j->end)
      return FALSE;
  }
  if (q >= j->end)
    return FALSE;
  /* escapes only shrink: \uXXXX is at most 3 bytes, a pair 4 */
  decoded = d = g_malloc (q - j->p);
  for (s = j->p + 1; s < q;) {
    gunichar c;
    gint hex;

    if (*s != '\\') {
      *d++ = *s++;
      continue;
    }
    s++;
    switch (*s++) {
      case '"':
        *d++ = '"';
        continue;
      case '\\':
        *d++ = '\\';
        continue;
      case '/':
        *d++ = '/';
        continue;
      case 'b':
        *d++ = '\b';
        continue;
      case 'f':
        *d++ = '\f';
        continue;
      case 'n':
        *d++ = '\n';
        continue;
      case 'r':
        *d++ = '\r';
        continue;
      case 't':
        *d++ = '\t';
        continue;
      case 'u':
        break;
      default:
        goto bad;
    }
    if (q - s < 4 || (hex = json_hex4 (s)) < 0)
      goto bad;
    c = hex;
    s += 4;
    if (c >= 0xd800 && c < 0xdc00) {
      gint low;

      if (q - s < 6 || s[0] != '\\' || s[1] != 'u'
          || (low = json_hex4 (s + 2)) < 0xdc00 || low >= 0xe000)
        goto bad;
      c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
      s += 6;
    } else if ((c >= 0xdc00 && c < 0xe000) || c == 0) {
      goto bad;
    }
    d += g_unichar_to_utf8 (c, d);
  }
  *d = '\0';
  j->p = q + 1;
  if (out)
    *out = decoded;
  else
    clear_secret (&decoded);
  return TRUE;

bad:
  memset (decoded, 0, q - j->p);
  g_free (decoded);
  return FALSE;
}

static gboolean
json_literal (Json * j, const gchar * word)
{
  gsize len = strlen (word);

  if ((gsize) (j->end - j->p) < len || memcmp (j->p, word, len) != 0)
    return FALSE;
  j->p += len;
  return TRUE;
}

static gboolean json_skip (Json * j, guint depth);

/* the members of an object or the elements of an array, at j->p past the
 * opening bracket */
static gboolean
json_skip_members (Json * j, guint depth, gchar close)
{
  json_space (j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return TRUE;
  }
  for (;;) {
    if (close == '}') {
      json_space (j);
      if (!json_string (j, NULL))
        return FALSE;
      json_space (j);
      if (j->p >= j->end || *j->p++ != ':')
        return FALSE;
    }
    if (!json_skip (j, depth + 1))
      return FALSE;
    json_space (j);
    if (j->p >= j->end)
      return FALSE;
    if (*j->p == close) {
      j->p++;
      return TRUE;
    }
    if (*j->p++ != ',')
      return FALSE;
  }
}

static gboolean
json_skip (Json * j, guint depth)
{
  const gchar *start;

  json_space (j);
  if (j->p >= j->end || depth > MAX_JSON_DEPTH)
    return FALSE;
  switch (*j->p) {
    case '"':
      return json_string (j, NULL);
    case '{':
    case '[':
      return json_skip_members (j, depth, *j->p++ == '{' ? '}' : ']');
    case 't':
      return json_literal (j, "true");
    case 'f':
      return json_literal (j, "false");
    case 'n':
      return json_literal (j, "null");
    default:
      break;
  }
  /* a number, loosely: its characters, at least one digit */
  start = j->p;
  while (j->p < j->end && (g_ascii_isdigit (*j->p) || *j->p == '-'
          || *j->p == '+' || *j->p == '.' || *j->p == 'e' || *j->p == 'E'))
    j->p++;
  return j->p > start && (g_ascii_isdigit (start[0]) || (start[0] == '-'
          && j->p > start + 1 && g_ascii_isdigit (start[1])));
}

/* The members @names of the JSON object in @data into @values (NULL where
 * absent; freed with clear_secret). FALSE with @why when @data is not one
 * object, or a wanted member is not a string or comes twice. */
static gboolean
json_object_strings (const gchar * data, gsize len,
    const gchar * const *names, gchar ** values, const gchar ** why)
{
  Json j = { data, data + len };
  guint i;

  for (i = 0; names[i]; i++)
    values[i] = NULL;
  json_space (&j);
  if (j.p >= j.end || *j.p++ != '{') {
    *why = "not a JSON object";
    return FALSE;
  }
  json_space (&j);
  if (j.p < j.end && *j.p == '}') {
    j.p++;
    goto end;
  }
  for (;;) {
    gchar *name = NULL;

    json_space (&j);
    if (!json_string (&j, &name))
      goto malformed;
    json_space (&j);
    if (j.p >= j.end || *j.p++ != ':') {
      g_free (name);
      goto malformed;
    }
    json_space (&j);
    for (i = 0; names[i] && strcmp (names[i], name) != 0; i++);
    g_free (name);
    if (names[i] == NULL) {
      if (!json_skip (&j, 1))
        goto malformed;
    } else if (values[i]) {
      *why = "a member twice";
      goto fail;
    } else if (!json_string (&j, &values[i])) {
      *why = "a member that is not a string";
      goto fail;
    }
    json_space (&j);
    if (j.p >= j.end)
      goto malformed;
    if (*j.p == '}') {
      j.p++;
      break;
    }
    if (*j.p++ != ',')
      goto malformed;
  }
end:
  json_space (&j);
  if (j.p == j.end)
    return TRUE;

malformed:
  *why = "malformed JSON";
fail:
  for (i = 0; names[i]; i++)
    clear_secret (&values[i]);
  return FALSE;
}

/* ---- HTTP, for the container and instance metadata services ---- */

typedef struct
{
  gchar *data;                  /* NUL-terminated */
  gsize len;
  gboolean too_large;
} Body;

static Body *
body_new (void)
{
  Body *b = g_new0 (Body, 1);

  /* once, at its largest: the answers hold secrets */
  b->data = g_malloc0 (MAX_BODY_SIZE + 1);
  return b;
}

static void
body_free (Body * b)
{
  memset (b->data, 0, b->len);
  g_free (b->data);
  g_free (b);
}

static size_t
body_write (char *ptr, size_t size, size_t nmemb, void *user_data)
{
  Body *b = user_data;
  gsize n = size * nmemb;

  if (n > MAX_BODY_SIZE - b->len) {
    b->too_large = TRUE;
    return 0;
  }
  memcpy (b->data + b->len, ptr, n);
  b->len += n;
  b->data[b->len] = '\0';
  return n;
}

static size_t
no_upload (char *buffer, size_t size, size_t nitems, void *user_data)
{
  return 0;
}

/* FALSE when cancelled before @us passed */
static gboolean
sleep_unless_cancelled (gint * cancel, gint64 us)
{
  gint64 end = g_get_monotonic_time () + us;

  while (!g_atomic_int_get (cancel)) {
    gint64 left = end - g_get_monotonic_time ();

    if (left <= 0)
      return TRUE;
    g_usleep (MIN (left, CANCEL_POLL_US));
  }
  return FALSE;
}

/* curl_easy_perform(), looking at *@cancel every CANCEL_POLL_US (libcurl's
 * progress callback comes about once a second only) */
static CURLcode
perform_unless_cancelled (CURL * easy, gint * cancel)
{
  CURLM *multi = curl_multi_init ();
  CURLcode res = CURLE_ABORTED_BY_CALLBACK;
  CURLMcode mc;
  CURLMsg *msg;
  int running = 1, left;

  if (multi == NULL)
    return CURLE_OUT_OF_MEMORY;
  mc = curl_multi_add_handle (multi, easy);
  while (mc == CURLM_OK && running && !g_atomic_int_get (cancel)) {
    mc = curl_multi_perform (multi, &running);
    if (mc == CURLM_OK && running)
      mc = curl_multi_poll (multi, NULL, 0, CANCEL_POLL_US / 1000, NULL);
  }
  if (mc != CURLM_OK)
    res = CURLE_FAILED_INIT;
  while ((msg = curl_multi_info_read (multi, &left))) {
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy)
      res = msg->data.result;
  }
  curl_multi_remove_handle (multi, easy);
  curl_multi_cleanup (multi);
  return res;
}

/* headers that may hold a secret: cleared before freed */
static void
headers_free (struct curl_slist *headers)
{
  struct curl_slist *h;

  for (h = headers; h; h = h->next)
    memset (h->data, 0, strlen (h->data));
  curl_slist_free_all (headers);
}

/* One GET, an empty PUT (@put) or a POST of @post (a form), no redirect,
 * @timeout_ms in all, ended early once *@cancel is set: the HTTP status,
 * or 0 with @why when no answer came. No proxy (the metadata services are
 * local) unless @post: STS is AWS's, reached as S3 is (the proxy
 * variables; AWS_CA_BUNDLE as botocore, CURL_CA_BUNDLE as the client). */
static long
http_request (const gchar * url, gboolean put, const gchar * post,
    struct curl_slist *headers, glong timeout_ms, gint * cancel, Body * body,
    gchar ** why)
{
  CURL *easy;
  CURLcode res;
  char errbuf[CURL_ERROR_SIZE];
  long status = 0;

  memset (body->data, 0, body->len);
  body->len = 0;
  body->too_large = FALSE;
  if (!init () || (easy = curl_easy_init ()) == NULL) {
    *why = g_strdup ("libcurl could not be initialized");
    return 0;
  }
  errbuf[0] = '\0';
  curl_easy_setopt (easy, CURLOPT_URL, url);
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  if (post) {
    const gchar *ca = env ("AWS_CA_BUNDLE");

    curl_easy_setopt (easy, CURLOPT_POSTFIELDS, post);
    curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE, (long) strlen (post));
    if (ca == NULL)
      ca = env ("CURL_CA_BUNDLE");
    if (ca)
      curl_easy_setopt (easy, CURLOPT_CAINFO, ca);
  } else {
    curl_easy_setopt (easy, CURLOPT_NOPROXY, "*");
  }
  curl_easy_setopt (easy, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, (long) timeout_ms);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, (long) timeout_ms);
  curl_easy_setopt (easy, CURLOPT_USERAGENT, "gst-spdl/" VERSION);
  curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, body_write);
  curl_easy_setopt (easy, CURLOPT_WRITEDATA, body);
  curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
  if (put) {
    curl_easy_setopt (easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt (easy, CURLOPT_INFILESIZE, 0L);
    curl_easy_setopt (easy, CURLOPT_READFUNCTION, no_upload);
  }
  res = perform_unless_cancelled (easy, cancel);
  if (res == CURLE_OK)
    curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &status);
  else if (body->too_large)
    *why = g_strdup_printf ("an answer larger than %d bytes", MAX_BODY_SIZE);
  else
    *why = g_strdup (errbuf[0] ? errbuf : curl_easy_strerror (res));
  curl_easy_cleanup (easy);
  return status;
}

/* Whether @url is valid and http(s), with its scheme and host (brackets
 * of an IPv6 address removed) */
static gboolean
parse_url (const gchar * url, gchar ** scheme, gchar ** host)
{
  CURLU *u = curl_url ();
  char *s = NULL, *h = NULL;
  gboolean ok = u && curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK
      && curl_url_get (u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK
      && curl_url_get (u, CURLUPART_HOST, &h, 0) == CURLUE_OK
      && (g_ascii_strcasecmp (s, "http") == 0
      || g_ascii_strcasecmp (s, "https") == 0);

  if (ok) {
    gsize len = strlen (h);

    *scheme = g_ascii_strdown (s, -1);
    if (len > 2 && h[0] == '[' && h[len - 1] == ']')
      *host = g_strndup (h + 1, len - 2);
    else
      *host = g_strdup (h);
  }
  curl_free (s);
  curl_free (h);
  curl_url_cleanup (u);
  return ok;
}

/* ---- The chain ---- */

typedef enum
{
  SOURCE_CONFIG,
  SOURCE_ENVIRONMENT,
  SOURCE_ASSUME_ROLE,
  SOURCE_WEB_IDENTITY,
  SOURCE_CREDENTIALS_FILE,
  SOURCE_CONFIG_FILE,
  SOURCE_CONTAINER,
  SOURCE_INSTANCE_METADATA,
  N_SOURCES
} Source;

typedef enum
{
  FOUND,
  NOT_HERE,                     /* a note in looked_at says why */
  FAILED                        /* set up wrongly: the chain stops */
} Outcome;

struct _GstSpdlAwsCredentialsProvider
{
  gchar *access_key;            /* the config's; NULL: not set */
  gchar *secret_key;
  gchar *session_token;
  gchar *profile;

  GMutex lock;
  GCond cond;                   /* a lookup ended */
  GstSpdlAwsCredentials *current;
  Source current_source;        /* where a refresh asks again */
  GError *failure;              /* of the last look-up */
  gint64 failed_at;             /* monotonic */
  /* monotonic: no background refresh before (the last one left
   * credentials as close to their end, or failed) */
  gint64 next_refresh_at;
  GThread *lookup;              /* running, or ended and not joined yet */
  gboolean looking_up;
  gint cancel;                  /* atomic: free() ends the lookup */
  GstSpdlAwsCredentialsNotify notify;
  gpointer notify_data;
};

typedef struct
{
  GstSpdlAwsCredentialsProvider *provider;
  Profile profile;
  GString *looked_at;
} Lookup;

static void
note (Lookup * l, const gchar * format, ...) G_GNUC_PRINTF (2, 3);

static void
note (Lookup * l, const gchar * format, ...)
{
  va_list args;

  if (l->looked_at->len)
    g_string_append (l->looked_at, "; ");
  va_start (args, format);
  g_string_append_vprintf (l->looked_at, format, args);
  va_end (args);
}

static Outcome
from_config (Lookup * l, GstSpdlAwsCredentials ** out, GError ** error)
{
  GstSpdlAwsCredentialsProvider *p = l->provider;
  const gchar *invalid;

  if (!p->access_key && !p->secret_key && !p->session_token) {
    note (l, PROPERTIES " (not set)");
    return NOT_HERE;
  }
  if (!p->access_key || !p->secret_key) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS credentials in " PROPERTIES ": %s", p->access_key ?
        "an access key without a secret key" : "no access key");
    return FAILED;
  }
  if ((invalid = credentials_invalid (p->access_key, p->secret_key,
              p->session_token))) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The AWS %s in " PROPERTIES " holds characters other than visible "
        "ASCII", invalid);
    return FAILED;
  }
  *out = credentials_new (p->access_key, p->secret_key, p->session_token, 0,
      g_strdup (PROPERTIES));
  return FOUND;
}

/* EnvProvider, also as a role's credential_source */
static Outcome
environment_credentials (Lookup * l, GstSpdlAwsCredentials ** out,
    GError ** error)
{
  const gchar *key = env ("AWS_ACCESS_KEY_ID");
  const gchar *secret = env ("AWS_SECRET_ACCESS_KEY");
  const gchar *token = env ("AWS_SECURITY_TOKEN");
  const gchar *expiration = env ("AWS_CREDENTIAL_EXPIRATION");
  const gchar *invalid;
  gint64 expires = 0;

  if (key == NULL) {
    note (l, "environment (AWS_ACCESS_KEY_ID %s)",
        g_getenv ("AWS_ACCESS_KEY_ID") ? "is empty" : "not set");
    return NOT_HERE;
  }
  if (secret == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    return FAILED;
  }
  if (token == NULL)
    token = env ("AWS_SESSION_TOKEN");
  if ((invalid = credentials_invalid (key, secret, token))) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The AWS %s in the environment holds characters other than "
        "visible ASCII", invalid);
    return FAILED;
  }
  if (expiration && !parse_expiration (expiration, &expires)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS_CREDENTIAL_EXPIRATION is not an ISO 8601 time: %s", expiration);
    return FAILED;
  }
  *out = credentials_new (key, secret, token, expires,
      g_strdup ("environment (AWS_ACCESS_KEY_ID)"));
  return FOUND;
}

static Outcome
from_environment (Lookup * l, GstSpdlAwsCredentials ** out, GError ** error)
{
  /* botocore drops its EnvProvider for a session's own profile */
  if (l->provider->profile) {
    note (l, "environment (not read: the profile is set in " PROPERTIES
        ")");
    return NOT_HERE;
  }
  return environment_credentials (l, out, error);
}

/* profile settings that botocore turns into credentials and this does not */
static const gchar *
unsupported_key (IniSection * section)
{
  static const gchar *const keys[] = { "credential_process",
    "sso_session", "sso_start_url", NULL
  };
  guint i;

  for (i = 0; keys[i]; i++) {
    if (ini_value (section, keys[i]))
      return keys[i];
  }
  return NULL;
}

static Outcome
from_profile_section (Lookup * l, const gchar * name, GPtrArray * file,
    const gchar * path, const gchar * why, IniSection * section,
    GstSpdlAwsCredentials ** out, GError ** error)
{
  const gchar *key, *secret, *token, *invalid, *unsupported;

  if (file == NULL) {
    note (l, "profile \"%s\" in %s (%s)", name, path, why);
    return NOT_HERE;
  }
  if (section == NULL) {
    note (l, "profile \"%s\" in %s (no such profile)", name, path);
    return NOT_HERE;
  }
  if ((key = ini_value (section, "aws_access_key_id")) == NULL) {
    if ((unsupported = unsupported_key (section))) {
      /* botocore would use it before the container and the instance:
       * going on would sign as another identity */
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "AWS profile \"%s\" in %s gets its credentials by %s, which is "
          "not supported: give it aws_access_key_id and "
          "aws_secret_access_key, or use another profile", name, path,
          unsupported);
      return FAILED;
    }
    note (l, "profile \"%s\" in %s (no aws_access_key_id)", name, path);
    return NOT_HERE;
  }
  if ((secret = ini_value (section, "aws_secret_access_key")) == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s has aws_access_key_id but no "
        "aws_secret_access_key", name, path);
    return FAILED;
  }
  token = ini_value (section, "aws_security_token");
  if (token == NULL)
    token = ini_value (section, "aws_session_token");
  if ((invalid = credentials_invalid (key, secret, token))) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The AWS %s of profile \"%s\" in %s holds characters other than "
        "visible ASCII", invalid, name, path);
    return FAILED;
  }
  *out = credentials_new (key, secret, token, 0,
      g_strdup_printf ("profile \"%s\" in %s", name, path));
  return FOUND;
}

static Outcome
from_credentials_file (Lookup * l, GstSpdlAwsCredentials ** out,
    GError ** error)
{
  Profile *p = &l->profile;

  return from_profile_section (l, p->name, p->creds, p->creds_path,
      p->creds_why, p->creds_section, out, error);
}

static Outcome
from_config_file (Lookup * l, GstSpdlAwsCredentials ** out, GError ** error)
{
  Profile *p = &l->profile;

  return from_profile_section (l, p->name, p->config, p->config_path,
      p->config_why, p->config_section, out, error);
}

/* The credentials in a metadata service's JSON answer, botocore's names.
 * NULL with @why (no secret in it) when it has none. */
static GstSpdlAwsCredentials *
parse_credentials (const Body * body, gboolean need_token_and_expiration,
    gchar * source, gchar ** why)
{
  static const gchar *const names[] = { "AccessKeyId", "SecretAccessKey",
    "Token", "Expiration", "Code", NULL
  };
  gchar *values[G_N_ELEMENTS (names)];
  const gchar *json_why = NULL, *invalid;
  GstSpdlAwsCredentials *c = NULL;
  gint64 expiration = 0;
  guint i;

  if (!json_object_strings (body->data, body->len, names, values,
          &json_why)) {
    *why = g_strdup_printf ("an answer that is not credentials: %s",
        json_why);
    g_free (source);
    return NULL;
  }
  /* IMDS answers 200 with {"Code": "...", "Message": "..."} for errors */
  if (values[4] && strcmp (values[4], "Success") != 0) {
    *why = g_strdup_printf ("an answer with Code \"%s\"",
        strlen (values[4]) <= 64 && is_visible_ascii (values[4]) ?
        values[4] : "(unprintable)");
  } else if (!values[0] || !values[1]) {
    *why = g_strdup_printf ("an answer without %s",
        values[0] ? "SecretAccessKey" : "AccessKeyId");
  } else if (need_token_and_expiration && (!values[2] || !values[3])) {
    *why = g_strdup_printf ("an answer without %s",
        values[2] ? "Expiration" : "Token");
  } else if ((invalid = credentials_invalid (values[0], values[1],
              values[2]))) {
    *why = g_strdup_printf ("an answer whose %s is empty or holds "
        "characters other than visible ASCII", invalid);
  } else if (values[3] && !parse_expiration (values[3], &expiration)) {
    *why = g_strdup ("an answer whose Expiration is not an ISO 8601 time");
  } else {
    c = credentials_new (values[0], values[1], values[2], expiration,
        source);
    source = NULL;
  }
  for (i = 0; names[i]; i++)
    clear_secret (&values[i]);
  g_free (source);
  return c;
}

static gboolean
host_is_loopback (const gchar * host)
{
  guint8 addr[16];

  if (inet_pton (AF_INET, host, addr) == 1)
    return addr[0] == 127;
  if (inet_pton (AF_INET6, host, addr) == 1) {
    static const guint8 loopback[16] = { [15] = 1 };

    return memcmp (addr, loopback, 16) == 0;
  }
  return FALSE;
}

/* botocore's ContainerMetadataFetcher._validate_allowed_url */
static gboolean
container_url_allowed (const gchar * url)
{
  static const gchar *const hosts[] = { CONTAINER_HOST, "169.254.170.23",
    "fd00:ec2::23", "localhost", NULL
  };
  gchar *scheme = NULL, *host = NULL;
  gboolean allowed = FALSE;
  guint i;

  if (parse_url (url, &scheme, &host)) {
    allowed = strcmp (scheme, "https") == 0 || host_is_loopback (host);
    for (i = 0; hosts[i] && !allowed; i++)
      allowed = g_ascii_strcasecmp (host, hosts[i]) == 0;
  }
  g_free (scheme);
  g_free (host);
  return allowed;
}

/* AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read each time: EKS rotates it)
 * or AWS_CONTAINER_AUTHORIZATION_TOKEN; *token NULL without either */
static gboolean
container_authorization (gchar ** token, GError ** error)
{
  const gchar *path = g_getenv ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  gchar *why = NULL;
  gsize len = 0;

  *token = NULL;
  if (path) {
    if ((*token = read_file_bounded (path, MAX_TOKEN_FILE_SIZE, &len,
                &why)) == NULL) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "Could not read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s",
          path, why);
      g_free (why);
      return FALSE;
    }
    if (strlen (*token) != len) {
      clear_secret (token);
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s holds a NUL byte", path);
      return FALSE;
    }
    /* a final newline is no part of it (botocore would reject it) */
    g_strchomp (*token);
  } else if (env ("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
    *token = g_strdup (env ("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
  }
  if (*token && strpbrk (*token, "\r\n")) {
    clear_secret (token);
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The container authorization token is not a legal header value");
    return FALSE;
  }
  if (*token && **token == '\0')
    clear_secret (token);
  return TRUE;
}

static Outcome
from_container (Lookup * l, GstSpdlAwsCredentials ** out, GError ** error)
{
  const gchar *relative = g_getenv ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const gchar *full = g_getenv ("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const gchar *var;
  struct curl_slist *headers = NULL;
  gchar *url, *token = NULL, *why = NULL, *source;
  Body *body;
  long status = 0;
  guint attempt;

  if (relative == NULL && full == NULL) {
    note (l, "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
        "and AWS_CONTAINER_CREDENTIALS_FULL_URI not set)");
    return NOT_HERE;
  }
  var = relative ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI" :
      "AWS_CONTAINER_CREDENTIALS_FULL_URI";
  url = relative ? g_strconcat ("http://" CONTAINER_HOST, relative, NULL) :
      g_strdup (full);
  if (!container_url_allowed (url)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "Container credentials (%s): %s is not allowed: https, or http to a "
        "loopback address, " CONTAINER_HOST ", 169.254.170.23, "
        "fd00:ec2::23 or localhost", var, url);
    g_free (url);
    return FAILED;
  }
  if (!container_authorization (&token, error)) {
    g_free (url);
    return FAILED;
  }
  headers = curl_slist_append (headers, "Accept: application/json");
  if (token) {
    gchar *h = g_strconcat ("Authorization: ", token, NULL);

    headers = curl_slist_append (headers, h);
    clear_secret (&h);
    clear_secret (&token);
  }
  body = body_new ();
  /* botocore's three tries a second apart; here only where another try
   * may help: no answer, 429, 5xx */
  for (attempt = 1;; attempt++) {
    g_clear_pointer (&why, g_free);
    status = http_request (url, FALSE, NULL, headers, CONTAINER_TIMEOUT_MS,
        &l->provider->cancel, body, &why);
    if ((status >= 200 && status < 429) || (status > 429 && status < 500)
        || attempt >= CONTAINER_ATTEMPTS
        || !sleep_unless_cancelled (&l->provider->cancel, G_USEC_PER_SEC))
      break;
  }
  headers_free (headers);
  source = g_strdup_printf ("container credentials (%s)", var);
  if (status == 200)
    *out = parse_credentials (body, FALSE, g_strdup (source), &why);
  else if (status)
    why = g_strdup_printf ("HTTP status %ld", status);
  body_free (body);
  if (*out == NULL)
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "Could not get the %s from %s: %s", source, url, why);
  g_free (source);
  g_free (url);
  g_free (why);
  return *out ? FOUND : FAILED;
}

typedef struct
{
  gchar *endpoint;              /* ends with '/' */
  glong timeout_ms;
  guint attempts;
  gint *cancel;
} Imds;

static guint
setting_uint (const Profile * p, const gchar * env_name, const gchar * key,
    guint fallback, guint min, guint max)
{
  const gchar *value = setting (p, env_name, key);
  guint64 n;

  if (value == NULL || !g_ascii_string_to_unsigned (value, 10, min, max, &n,
          NULL))
    return fallback;
  return n;
}

/* botocore's IMDSFetcher settings: the environment, then the profile */
static gboolean
imds_settings (const Profile * p, Imds * imds, GError ** error)
{
  const gchar *endpoint = setting (p, "AWS_EC2_METADATA_SERVICE_ENDPOINT",
      "ec2_metadata_service_endpoint");
  const gchar *mode = setting (p, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
      "ec2_metadata_service_endpoint_mode");
  gchar *scheme = NULL, *host = NULL;
  gboolean ipv6;

  /* checked even where an endpoint is set, as botocore */
  if (mode && g_ascii_strcasecmp (mode, "ipv4") != 0
      && g_ascii_strcasecmp (mode, "ipv6") != 0) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The EC2 metadata endpoint mode \"%s\" is neither IPv4 nor IPv6",
        mode);
    return FALSE;
  }
  if (mode)
    ipv6 = g_ascii_strcasecmp (mode, "ipv6") == 0;
  else
    ipv6 = setting_is_true (p, "AWS_IMDS_USE_IPV6", "imds_use_ipv6");
  if (endpoint == NULL)
    endpoint = ipv6 ? IMDS_ENDPOINT_IPV6 : IMDS_ENDPOINT;
  if (!parse_url (endpoint, &scheme, &host)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "The EC2 metadata endpoint %s is not an http(s) URL", endpoint);
    return FALSE;
  }
  g_free (scheme);
  g_free (host);
  imds->endpoint = g_str_has_suffix (endpoint, "/") ? g_strdup (endpoint) :
      g_strconcat (endpoint, "/", NULL);
  imds->timeout_ms = 1000 * setting_uint (p, "AWS_METADATA_SERVICE_TIMEOUT",
      "metadata_service_timeout", 1, 1, 60);
  imds->attempts = setting_uint (p, "AWS_METADATA_SERVICE_NUM_ATTEMPTS",
      "metadata_service_num_attempts", 1, 1, 10);
  return TRUE;
}

/* A GET under the endpoint, tried again (up to the attempts) on no answer,
 * a status other than 200 or an empty body, as botocore: the last status. */
static long
imds_get (const Imds * imds, const gchar * path, const gchar * token,
    Body * body, gchar ** why)
{
  struct curl_slist *headers = NULL;
  gchar *url = g_strconcat (imds->endpoint, path, NULL);
  long status = 0;
  guint attempt;

  if (token) {
    gchar *h = g_strconcat ("X-aws-ec2-metadata-token: ", token, NULL);

    headers = curl_slist_append (headers, h);
    clear_secret (&h);
  }
  for (attempt = 0; attempt < imds->attempts
      && !g_atomic_int_get (imds->cancel); attempt++) {
    g_clear_pointer (why, g_free);
    status = http_request (url, FALSE, NULL, headers, imds->timeout_ms,
        imds->cancel, body, why);
    if (status == 200 && body->len > 0)
      break;
  }
  headers_free (headers);
  g_free (url);
  return status;
}

/* An IAM role name: botocore puts it into the URL as it comes */
static gboolean
is_role_name (const gchar * s, gsize len)
{
  gsize i;

  if (len == 0 || len > IMDS_MAX_ROLE_LEN)
    return FALSE;
  for (i = 0; i < len; i++) {
    if (!g_ascii_isalnum (s[i]) && !strchr ("+=,.@_-", s[i]))
      return FALSE;
  }
  return TRUE;
}

/* InstanceMetadataFetcher.retrieve_iam_role_credentials: failures are no
 * credentials, never errors. */
static Outcome
from_instance_metadata (Lookup * l, GstSpdlAwsCredentials ** out,
    GError ** error)
{
  Imds imds = { NULL, 0, 0, &l->provider->cancel };
  struct curl_slist *headers = NULL;
  gchar *url, *token = NULL, *why = NULL, *role = NULL, *path;
  Body *body;
  long status = 0;
  guint attempt;
  gsize len;

  if (g_ascii_strcasecmp (g_getenv ("AWS_EC2_METADATA_DISABLED") ?
          g_getenv ("AWS_EC2_METADATA_DISABLED") : "", "true") == 0) {
    note (l, "instance metadata (AWS_EC2_METADATA_DISABLED is true)");
    return NOT_HERE;
  }
  if (!imds_settings (&l->profile, &imds, error))
    return FAILED;

  body = body_new ();
  url = g_strconcat (imds.endpoint, IMDS_TOKEN_PATH, NULL);
  headers = curl_slist_append (headers,
      "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
  headers = curl_slist_append (headers, "Expect:");
  /* 5xx and other oddities are tried again; no answer is not: unlike
   * botocore, which then tries IMDSv1 as well, doubling the wait on a
   * machine without metadata */
  for (attempt = 0; attempt < imds.attempts; attempt++) {
    g_clear_pointer (&why, g_free);
    status = http_request (url, TRUE, NULL, headers, imds.timeout_ms,
        imds.cancel, body, &why);
    if (status == 0 || status == 200 || status == 400 || status == 403
        || status == 404 || status == 405)
      break;
  }
  curl_slist_free_all (headers);
  g_free (url);
  if (status == 200) {
    len = body->len;
    while (len > 0 && g_ascii_isspace (body->data[len - 1]))
      len--;
    body->data[len] = '\0';
    if (len == 0 || len > IMDS_MAX_TOKEN_LEN || !is_visible_ascii (body->data))
      why = g_strdup ("a token that is not one");
    else
      token = g_strndup (body->data, len);
  } else if (status == 403 || status == 404 || status == 405) {
    /* no IMDSv2 here: IMDSv1 unless that is disabled */
    if (setting_is_true (&l->profile, "AWS_EC2_METADATA_V1_DISABLED",
            "ec2_metadata_v1_disabled"))
      why = g_strdup_printf ("HTTP status %ld for a token, and IMDSv1 is "
          "disabled", status);
  } else if (status) {
    why = g_strdup_printf ("HTTP status %ld for a token", status);
  }
  if (why == NULL) {
    status = imds_get (&imds, IMDS_ROLE_PATH, token, body, &why);
    if (status == 200 && body->len > 0) {
      len = strcspn (body->data, "\r\n");
      if (is_role_name (body->data, len))
        role = g_strndup (body->data, len);
      else
        why = g_strdup ("an IAM role name that is not one");
    } else if (status == 200) {
      why = g_strdup ("an empty IAM role name");
    } else if (status == 404) {
      why = g_strdup ("no IAM role (HTTP status 404)");
    } else if (status) {
      why = g_strdup_printf ("HTTP status %ld for the IAM role", status);
    }
  }
  if (role) {
    path = g_strconcat (IMDS_ROLE_PATH, role, NULL);
    status = imds_get (&imds, path, token, body, &why);
    g_free (path);
    if (status == 200)
      *out = parse_credentials (body, TRUE,
          g_strdup_printf ("instance metadata (%s)", token ? "IMDSv2" :
              "IMDSv1"), &why);
    else if (status)
      why = g_strdup_printf ("HTTP status %ld for the role's credentials",
          status);
  }
  if (*out == NULL)
    note (l, "instance metadata at %s (%s)", imds.endpoint, why);
  clear_secret (&token);
  body_free (body);
  g_free (role);
  g_free (why);
  g_free (imds.endpoint);
  return *out ? FOUND : NOT_HERE;
}

/* ---- STS: roles that profiles assume (role_arn), and web identity
 * (EKS's IRSA), as botocore's AssumeRoleProvider and
 * AssumeRoleWithWebIdentityProvider ---- */

#define STS_VERSION "2011-06-15"
#define STS_FORM_TYPE "application/x-www-form-urlencoded; charset=utf-8"
#define STS_TIMEOUT_MS (30 * 1000)
#define STS_ATTEMPTS 3

/* The same files, as read, for another profile of them: borrowed, never
 * cleared */
static Profile
profile_other (const Profile * p, const gchar * name)
{
  Profile other = *p;

  other.name = (gchar *) name;
  other.named_by = NULL;
  other.creds_section = ini_section (p->creds, name);
  other.config_section = config_profile_section (p->config, name);
  return other;
}

/* the file profile_value() takes @key from, for messages */
static const gchar *
profile_key_path (const Profile * p, const gchar * key)
{
  return ini_value (p->creds_section, key) ? p->creds_path : p->config_path;
}

/* botocore's STS client: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the
 * profile's (its services section's sts block, endpoint_url), else the
 * region's endpoint (sts_regional_endpoints=regional, botocore's default)
 * or, without a region, the global one; *@region signs. */
static gchar *
sts_url (const Profile * p, gchar ** region)
{
  const gchar *r = env ("AWS_REGION"), *url = env ("AWS_ENDPOINT_URL_STS");
  gchar *endpoint;

  if (r == NULL)
    r = env ("AWS_DEFAULT_REGION");
  if (r == NULL)
    r = profile_value (p, "region");
  *region = g_strdup (r ? r : "us-east-1");
  if (url == NULL)
    url = env ("AWS_ENDPOINT_URL");
  if (url == NULL)
    url = profile_endpoint_url (p, "sts");
  if (url)
    endpoint = g_str_has_suffix (url, "/") ? g_strdup (url) :
        g_strconcat (url, "/", NULL);
  else if (r)
    endpoint = g_strdup_printf ("https://sts.%s.amazonaws.com/", r);
  else
    endpoint = g_strdup ("https://sts.amazonaws.com/");
  return endpoint;
}

/* botocore's RoleSessionName when the profile names none */
static gchar *
default_session_name (void)
{
  return g_strdup_printf ("botocore-session-%" G_GINT64_FORMAT, now_s ());
}

/* "&name=value", form-encoded; appended in place: @form is sized for the
 * secrets it holds, no copy of one is left behind by a reallocation */
static void
form_add (GString * form, const gchar * name, const gchar * value)
{
  gchar *escaped = g_uri_escape_string (value, NULL, FALSE);

  g_string_append_c (form, '&');
  g_string_append (form, name);
  g_string_append_c (form, '=');
  g_string_append (form, escaped);
  clear_secret (&escaped);
}

static void
form_free (GString * form)
{
  memset (form->str, 0, form->allocated_len);
  g_string_free (form, TRUE);
}

/* The text of the first <@name> at or after @from: a string of its own
 * size (it may be a secret); NULL when absent, or holding markup or an
 * entity (AWS's keys, secrets, tokens and times hold none). */
static gchar *
xml_text (const gchar * from, const gchar * name)
{
  gchar *open = g_strdup_printf ("<%s>", name);
  gchar *close = g_strdup_printf ("</%s>", name);
  const gchar *start = from ? strstr (from, open) : NULL, *end = NULL;
  gchar *text = NULL;

  if (start) {
    start += strlen (open);
    end = strstr (start, close);
  }
  if (end && !memchr (start, '<', end - start)
      && !memchr (start, '&', end - start))
    text = g_strndup (start, end - start);
  g_free (open);
  g_free (close);
  return text;
}

/* The <Credentials> of an AssumeRole* answer; NULL with @why */
static GstSpdlAwsCredentials *
sts_credentials (const Body * body, gchar * source, gchar ** why)
{
  static const gchar *const names[] = { "AccessKeyId", "SecretAccessKey",
    "SessionToken", "Expiration", NULL
  };
  const gchar *from = strstr (body->data, "<Credentials>"), *invalid;
  gchar *values[G_N_ELEMENTS (names)];
  GstSpdlAwsCredentials *c = NULL;
  gint64 expiration = 0;
  guint i;

  for (i = 0; names[i]; i++)
    values[i] = xml_text (from, names[i]);
  for (i = 0; names[i] && values[i]; i++);
  if (names[i])
    *why = g_strdup_printf ("an answer without %s", names[i]);
  else if ((invalid = credentials_invalid (values[0], values[1], values[2])))
    *why = g_strdup_printf ("an answer whose %s is empty or holds "
        "characters other than visible ASCII", invalid);
  else if (!parse_expiration (values[3], &expiration))
    *why = g_strdup ("an answer whose Expiration is not an ISO 8601 time");
  else
    c = credentials_new (values[0], values[1], values[2], expiration,
        g_steal_pointer (&source));
  for (i = 0; names[i]; i++)
    clear_secret (&values[i]);
  g_free (source);
  return c;
}

/* One STS @action, its parameters in @form (after a leading '&'), signed
 * with @signer or, NULL, unsigned: the answer's credentials, with @source
 * (taken); NULL with @error, which @what begins, and which names STS's
 * error code. Tried again on no answer, 429 and 5xx, as botocore. */
static GstSpdlAwsCredentials *
sts_call (Lookup * l, const gchar * action, GString * form,
    const GstSpdlAwsCredentials * signer, const gchar * what, gchar * source,
    GError ** error)
{
  gchar *region, *url = sts_url (&l->profile, &region), *why = NULL;
  gchar *code = NULL, *message = NULL, *sha256, *request;
  struct curl_slist *headers = NULL;
  GstSpdlAwsCredentials *c = NULL;
  GError *sign_error = NULL;
  Body *body;
  long status = 0;
  guint attempt;

  request = g_strconcat ("Action=", action, "&Version=" STS_VERSION, NULL);
  g_string_prepend (form, request);
  g_free (request);
  headers = curl_slist_append (headers, "Content-Type: " STS_FORM_TYPE);
  /* a web identity token makes the form larger than libcurl's threshold */
  headers = curl_slist_append (headers, "Expect:");
  if (signer) {
    static const gchar *const signed_headers[] = {
      "Content-Type: " STS_FORM_TYPE, NULL
    };
    GstSpdlSigV4Credentials key = { signer->access_key, signer->secret_key,
      signer->session_token, region, "sts"
    };
    gchar **lines, **line;

    sha256 = g_compute_checksum_for_string (G_CHECKSUM_SHA256, form->str, -1);
    lines = gst_spdl_sigv4_sign (&key, "POST", url, signed_headers, sha256,
        now_s (), NULL, &sign_error);
    g_free (sha256);
    for (line = lines; line && *line; line++)
      headers = curl_slist_append (headers, *line);
    gst_spdl_sigv4_headers_free (lines);
    if (sign_error) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "%s: STS at %s: %s", what, url, sign_error->message);
      g_error_free (sign_error);
      headers_free (headers);
      g_free (url);
      g_free (region);
      g_free (source);
      return NULL;
    }
  }
  body = body_new ();
  for (attempt = 1;; attempt++) {
    g_clear_pointer (&why, g_free);
    status = http_request (url, FALSE, form->str, headers, STS_TIMEOUT_MS,
        &l->provider->cancel, body, &why);
    if ((status && status != 429 && status < 500) || attempt >= STS_ATTEMPTS
        || !sleep_unless_cancelled (&l->provider->cancel, G_USEC_PER_SEC))
      break;
  }
  headers_free (headers);
  if (status == 200) {
    c = sts_credentials (body, g_steal_pointer (&source), &why);
    if (c == NULL)
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
          "%s: STS at %s answered %s", what, url, why);
  } else if (status && gst_spdl_aws_parse_error (body->data, body->len, &code,
          &message)) {
    g_set_error (error, GST_RESOURCE_ERROR, status == 401 || status == 403 ?
        GST_RESOURCE_ERROR_NOT_AUTHORIZED : GST_RESOURCE_ERROR_READ,
        "%s: STS error %s: %s (HTTP status %ld from %s%s%s)", what, code,
        message && *message ? message : "no message", status, url,
        signer ? "; signed with the credentials from " : "",
        signer ? signer->source : "");
  } else if (status) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "%s: HTTP status %ld from STS at %s", what, status, url);
  } else {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "%s: no answer from STS at %s: %s", what, url, why);
  }
  body_free (body);
  g_free (code);
  g_free (message);
  g_free (why);
  g_free (url);
  g_free (region);
  g_free (source);
  return c;
}

/* AssumeRoleWithWebIdentity, unsigned: the token is the proof. The file
 * is read each time (EKS rotates it). */
static GstSpdlAwsCredentials *
web_identity (Lookup * l, const gchar * where, const gchar * token_path,
    const gchar * arn, const gchar * session, GError ** error)
{
  GstSpdlAwsCredentials *c;
  gchar *token, *why = NULL, *what, *default_session = NULL;
  GString *form;
  gsize len = 0;

  if (arn == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "%s: web identity (token file %s) without a role to assume: set "
        "role_arn in the profile, or AWS_ROLE_ARN", where, token_path);
    return NULL;
  }
  token = read_file_bounded (token_path, MAX_TOKEN_FILE_SIZE, &len, &why);
  if (token && strlen (token) != len)
    why = g_strdup ("it holds a NUL byte");
  else if (token && *g_strchomp (token) == '\0')
    why = g_strdup ("it is empty");
  if (why) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "%s: could not read the web identity token file %s: %s", where,
        token_path, why);
    g_free (why);
    if (token) {
      memset (token, 0, len);
      g_free (token);
    }
    return NULL;
  }
  if (session == NULL)
    session = default_session = default_session_name ();
  /* room for all escaped, and the action: never reallocated */
  form = g_string_sized_new (3 * (len + strlen (arn) + strlen (session))
      + 256);
  form_add (form, "RoleArn", arn);
  form_add (form, "RoleSessionName", session);
  form_add (form, "WebIdentityToken", token);
  memset (token, 0, len);
  g_free (token);
  what = g_strdup_printf ("%s: AssumeRoleWithWebIdentity of %s", where, arn);
  c = sts_call (l, "AssumeRoleWithWebIdentity", form, NULL, what,
      g_strdup_printf ("%s (web identity, role %s)", where, arn), error);
  form_free (form);
  g_free (what);
  g_free (default_session);
  return c;
}

/* botocore's credential_source: credentials of this process's own */
static GstSpdlAwsCredentials *
credential_source (Lookup * l, const Profile * role, const gchar * name,
    GError ** error)
{
  const gchar *path = profile_key_path (role, "credential_source");
  GstSpdlAwsCredentials *c = NULL;
  Outcome outcome;

  if (strcmp (name, "Environment") == 0)
    outcome = environment_credentials (l, &c, error);
  else if (strcmp (name, "EcsContainer") == 0)
    outcome = from_container (l, &c, error);
  else if (strcmp (name, "Ec2InstanceMetadata") == 0)
    outcome = from_instance_metadata (l, &c, error);
  else {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s: credential_source \"%s\" is none of "
        "Environment, Ec2InstanceMetadata, EcsContainer", role->name, path,
        name);
    return NULL;
  }
  if (outcome == NOT_HERE)
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s: no credentials in its credential_source "
        "%s. Looked at: %s", role->name, path, name, l->looked_at->str);
  return c;
}

static GstSpdlAwsCredentials *assume_role (Lookup * l, const Profile * role,
    GPtrArray * visited, GError ** error);

static gboolean
has_static_credentials (const Profile * p)
{
  return profile_value (p, "aws_access_key_id")
      || profile_value (p, "aws_secret_access_key");
}

/* botocore's _resolve_source_credentials for a source_profile: its web
 * identity, its keys (neither from the environment), or the role it
 * assumes in turn */
static GstSpdlAwsCredentials *
source_profile (Lookup * l, const Profile * role, const gchar * name,
    GPtrArray * visited, GError ** error)
{
  Profile source = profile_other (&l->profile, name);
  const gchar *path = profile_key_path (role, "source_profile");
  GstSpdlAwsCredentials *c = NULL;
  const gchar *token_path;
  Outcome outcome;
  guint i;

  if (source.creds_section == NULL && source.config_section == NULL) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s: its source_profile \"%s\" is neither in "
        "%s nor in %s", role->name, path, name, source.creds_path,
        source.config_path);
    return NULL;
  }
  for (i = 0; i < visited->len; i++) {
    GString *loop;

    if (strcmp (g_ptr_array_index (visited, i), name) != 0)
      continue;
    /* a profile may take its own keys to assume its role */
    if (strcmp (name, role->name) == 0 && has_static_credentials (&source))
      break;
    loop = g_string_new (NULL);
    for (i = 0; i < visited->len; i++)
      g_string_append_printf (loop, "\"%s\" -> ",
          (const gchar *) g_ptr_array_index (visited, i));
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profiles %s\"%s\" in %s: a loop of source_profile", loop->str,
        name, path);
    g_string_free (loop, TRUE);
    return NULL;
  }
  token_path = profile_value (&source, "web_identity_token_file");
  if (token_path) {
    gchar *where = g_strdup_printf ("AWS profile \"%s\" in %s", name,
        profile_key_path (&source, "web_identity_token_file"));

    c = web_identity (l, where, token_path, profile_value (&source,
            "role_arn"), profile_value (&source, "role_session_name"), error);
    g_free (where);
    return c;
  }
  if (has_static_credentials (&source)
      || profile_value (&source, "role_arn") == NULL) {
    outcome = from_profile_section (l, name, source.creds, source.creds_path,
        source.creds_why, source.creds_section, &c, error);
    if (outcome == NOT_HERE)
      outcome = from_profile_section (l, name, source.config,
          source.config_path, source.config_why, source.config_section, &c,
          error);
    if (outcome == NOT_HERE)
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "AWS profile \"%s\" in %s: its source_profile \"%s\" has no "
          "credentials (aws_access_key_id and aws_secret_access_key, "
          "role_arn, web_identity_token_file)", role->name, path, name);
    return c;
  }
  return assume_role (l, &source, visited, error);
}

/* botocore's AssumeRoleProvider for the profile @role: the credentials of
 * its source_profile or credential_source assume its role_arn */
static GstSpdlAwsCredentials *
assume_role (Lookup * l, const Profile * role, GPtrArray * visited,
    GError ** error)
{
  const gchar *arn = profile_value (role, "role_arn");
  const gchar *path = profile_key_path (role, "role_arn");
  const gchar *from_profile = profile_value (role, "source_profile");
  const gchar *from_process = profile_value (role, "credential_source");
  const gchar *session = profile_value (role, "role_session_name");
  const gchar *external_id = profile_value (role, "external_id");
  const gchar *duration = profile_value (role, "duration_seconds");
  GstSpdlAwsCredentials *signer, *c;
  gchar *default_session = NULL, *what;
  GString *form;
  guint64 seconds;

  if (profile_value (role, "mfa_serial")) {
    /* botocore prompts on the terminal: a pipeline has none */
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s assumes its role with an MFA code "
        "(mfa_serial), which cannot be asked for here: assume it first "
        "(aws sts assume-role ... --serial-number --token-code) and give "
        "its keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
        "AWS_SESSION_TOKEN), or use a profile without mfa_serial",
        role->name, path);
    return NULL;
  }
  if ((from_profile == NULL) == (from_process == NULL)) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "AWS profile \"%s\" in %s has role_arn and %s of source_profile and "
        "credential_source: give one", role->name, path,
        from_profile ? "both" : "neither");
    return NULL;
  }
  g_ptr_array_add (visited, role->name);
  if (from_profile)
    signer = source_profile (l, role, from_profile, visited, error);
  else
    signer = credential_source (l, role, from_process, error);
  if (signer == NULL)
    return NULL;

  form = g_string_new (NULL);
  form_add (form, "RoleArn", arn);
  if (session == NULL)
    session = default_session = default_session_name ();
  form_add (form, "RoleSessionName", session);
  if (external_id)
    form_add (form, "ExternalId", external_id);
  /* botocore ignores one that is no integer */
  if (duration && g_ascii_string_to_unsigned (duration, 10, 1, G_MAXINT32,
          &seconds, NULL))
    g_string_append_printf (form, "&DurationSeconds=%" G_GUINT64_FORMAT,
        seconds);
  else if (duration)
    GST_WARNING ("AWS profile \"%s\": duration_seconds \"%s\" is no number "
        "of seconds, STS's default is asked for", role->name, duration);
  what = g_strdup_printf ("AWS profile \"%s\" in %s: AssumeRole of %s",
      role->name, path, arn);
  c = sts_call (l, "AssumeRole", form, signer, what,
      g_strdup_printf ("profile \"%s\" (role %s, assumed with the "
          "credentials from %s)", role->name, arn, signer->source), error);
  form_free (form);
  g_free (what);
  g_free (default_session);
  gst_spdl_aws_credentials_free (signer);
  return c;
}

static Outcome
from_assume_role (Lookup * l, GstSpdlAwsCredentials ** out, GError ** error)
{
  const Profile *p = &l->profile;
  GPtrArray *visited;

  /* botocore's _has_assume_role_config_vars */
  if (profile_value (p, "role_arn") == NULL
      || profile_value (p, "web_identity_token_file"))
    return NOT_HERE;
  visited = g_ptr_array_new ();
  *out = assume_role (l, p, visited, error);
  g_ptr_array_unref (visited);
  return *out ? FOUND : FAILED;
}

/* AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME (not
 * read for a profile set in the properties, as botocore), each before the
 * profile's web_identity_token_file, role_arn, role_session_name */
static Outcome
from_web_identity (Lookup * l, GstSpdlAwsCredentials ** out,
    GError ** error)
{
  const Profile *p = &l->profile;
  gboolean use_env = l->provider->profile == NULL;
  const gchar *path = use_env ? env ("AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
  const gchar *arn = use_env ? env ("AWS_ROLE_ARN") : NULL;
  const gchar *session = use_env ? env ("AWS_ROLE_SESSION_NAME") : NULL;
  gchar *where;

  if (path)
    where = g_strdup ("AWS_WEB_IDENTITY_TOKEN_FILE");
  else if ((path = profile_value (p, "web_identity_token_file")))
    where = g_strdup_printf ("profile \"%s\" in %s", p->name,
        profile_key_path (p, "web_identity_token_file"));
  else {
    note (l, "web identity (%sthe profile's web_identity_token_file not "
        "set)", use_env ? "AWS_WEB_IDENTITY_TOKEN_FILE and " : "");
    return NOT_HERE;
  }
  if (arn == NULL)
    arn = profile_value (p, "role_arn");
  if (session == NULL)
    session = profile_value (p, "role_session_name");
  *out = web_identity (l, where, path, arn, session, error);
  g_free (where);
  return *out ? FOUND : FAILED;
}

static Outcome (*const steps[N_SOURCES]) (Lookup *, GstSpdlAwsCredentials **,
    GError **) = {
  from_config, from_environment, from_assume_role, from_web_identity,
  from_credentials_file, from_config_file, from_container,
  from_instance_metadata
};

/* botocore's ProfileNotFound: a profile named explicitly must exist in
 * one of the files */
static gboolean
check_profile (Lookup * l, GError ** error)
{
  Profile *p = &l->profile;

  if (p->named_by == NULL || p->creds_section || p->config_section)
    return TRUE;
  g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
      "The AWS profile \"%s\" (from %s) is neither in %s (%s) nor in %s (%s)",
      p->name, p->named_by, p->creds_path, p->creds ? "no such profile" :
      p->creds_why, p->config_path, p->config ? "no such profile" :
      p->config_why);
  return FALSE;
}

/* The chain, or only @only (a refresh) when it is not N_SOURCES */
static GstSpdlAwsCredentials *
look_up (GstSpdlAwsCredentialsProvider * provider, Source only,
    Source * source, GError ** error)
{
  Lookup l;
  GstSpdlAwsCredentials *c = NULL;
  Outcome outcome = NOT_HERE;
  guint s;

  l.provider = provider;
  l.looked_at = g_string_new (NULL);
  profile_load (&l.profile, provider->profile);
  for (s = 0; s < N_SOURCES && outcome == NOT_HERE; s++) {
    if (only != N_SOURCES && s != only)
      continue;
    if (only == N_SOURCES && s == SOURCE_ENVIRONMENT
        && !check_profile (&l, error)) {
      outcome = FAILED;
      break;
    }
    outcome = steps[s] (&l, &c, error);
    if (outcome == FOUND)
      *source = s;
  }
  if (outcome == NOT_HERE)
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "No AWS credentials found. Looked at: %s", l.looked_at->str);
  else if (l.looked_at->len)
    GST_DEBUG ("looked at first: %s", l.looked_at->str);
  profile_clear (&l.profile);
  g_string_free (l.looked_at, TRUE);
  return c;
}

static gchar *
dup_set (const gchar * s)
{
  return s && *s ? g_strdup (s) : NULL;
}

GstSpdlAwsCredentialsProvider *
gst_spdl_aws_credentials_provider_new (const GstSpdlAwsCredentialsConfig *
    config)
{
  GstSpdlAwsCredentialsProvider *p =
      g_new0 (GstSpdlAwsCredentialsProvider, 1);

  init ();
  if (config) {
    p->access_key = dup_set (config->access_key);
    p->secret_key = dup_set (config->secret_key);
    p->session_token = dup_set (config->session_token);
    p->profile = dup_set (config->profile);
  }
  g_mutex_init (&p->lock);
  g_cond_init (&p->cond);
  return p;
}

void
gst_spdl_aws_credentials_provider_set_notify (GstSpdlAwsCredentialsProvider *
    p, GstSpdlAwsCredentialsNotify notify, gpointer user_data)
{
  p->notify = notify;
  p->notify_data = user_data;
}

void
gst_spdl_aws_credentials_provider_free (GstSpdlAwsCredentialsProvider * p)
{
  if (p == NULL)
    return;
  g_atomic_int_set (&p->cancel, 1);
  if (p->lookup)
    g_thread_join (p->lookup);
  clear_secret (&p->access_key);
  clear_secret (&p->secret_key);
  clear_secret (&p->session_token);
  g_free (p->profile);
  gst_spdl_aws_credentials_free (p->current);
  g_clear_error (&p->failure);
  g_mutex_clear (&p->lock);
  g_cond_clear (&p->cond);
  g_free (p);
}

/* within @margin seconds of expiring, or past it */
static gboolean
expiring (const GstSpdlAwsCredentials * c, gint64 now, gint64 margin)
{
  return c->expiration != 0 && now >= c->expiration - margin;
}

/* usable for a request: not within the mandatory margin */
static gboolean
valid (const GstSpdlAwsCredentials * c, gint64 now)
{
  return c && !expiring (c, now, GST_SPDL_AWS_CREDENTIALS_EXPIRY_S);
}

/* The provider's thread: one lookup, files and HTTP requests, without the
 * lock; its outcome under it. */
static gpointer
lookup_thread (gpointer data)
{
  GstSpdlAwsCredentialsProvider *p = data;
  GstSpdlAwsCredentials *c;
  GError *err = NULL;
  Source only, source = N_SOURCES;
  gint64 now;

  g_mutex_lock (&p->lock);
  only = p->current ? p->current_source : N_SOURCES;
  g_mutex_unlock (&p->lock);

  c = look_up (p, only, &source, &err);
  now = now_s ();
  if (c && !valid (c, now)) {
    GDateTime *dt = g_date_time_new_from_unix_utc (c->expiration);
    gchar *at = dt ? g_date_time_format_iso8601 (dt) : NULL;

    /* as botocore's "refreshed credentials are still expired": asking
     * again at once would only get the same */
    g_set_error (&err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ,
        "The credentials from %s expire%s at %s", c->source,
        now >= c->expiration ? "d" : "", at ? at : "?");
    g_free (at);
    if (dt)
      g_date_time_unref (dt);
    gst_spdl_aws_credentials_free (c);
    c = NULL;
  }

  g_mutex_lock (&p->lock);
  if (c) {
    GST_INFO ("AWS credentials from %s, access key %.4s..., %s", c->source,
        c->access_key, c->expiration ? "temporary" : "not expiring");
    gst_spdl_aws_credentials_free (p->current);
    p->current = c;
    p->current_source = source;
    g_clear_error (&p->failure);
    p->next_refresh_at = expiring (c, now, GST_SPDL_AWS_CREDENTIALS_REFRESH_S)
        ? g_get_monotonic_time () + FAILURE_RETRY_US : 0;
  } else {
    if (p->current)
      GST_WARNING ("could not refresh the AWS credentials from %s (%s): %s",
          p->current->source, valid (p->current, now) ?
          "the current ones are used while they last" : "they expired",
          err->message);
    g_clear_error (&p->failure);
    p->failure = err;
    p->failed_at = g_get_monotonic_time ();
    p->next_refresh_at = p->failed_at + FAILURE_RETRY_US;
  }
  p->looking_up = FALSE;
  g_cond_broadcast (&p->cond);
  if (p->notify)
    p->notify (p->notify_data);
  g_mutex_unlock (&p->lock);
  return NULL;
}

/* Called with the lock: a lookup on the provider's thread, unless one is
 * under way. FALSE (with @error) when no thread could be made. */
static gboolean
start_lookup (GstSpdlAwsCredentialsProvider * p, GError ** error)
{
  if (p->looking_up)
    return TRUE;
  /* the last one ended: it only has to return */
  if (p->lookup)
    g_thread_join (p->lookup);
  p->lookup = g_thread_try_new ("spdlawscreds", lookup_thread, p, error);
  p->looking_up = p->lookup != NULL;
  return p->looking_up;
}

/* Called with the lock */
static GstSpdlAwsCredentialsStatus
try_get_locked (GstSpdlAwsCredentialsProvider * p,
    GstSpdlAwsCredentials ** credentials, GError ** error)
{
  gint64 now = now_s ();
  GError *err = NULL;

  *credentials = NULL;
  if (valid (p->current, now)) {
    /* advisory: the current ones meanwhile; a failure is tolerated */
    if (expiring (p->current, now, GST_SPDL_AWS_CREDENTIALS_REFRESH_S)
        && !p->looking_up && g_get_monotonic_time () >= p->next_refresh_at
        && !start_lookup (p, &err)) {
      GST_WARNING ("could not refresh the AWS credentials: %s", err->message);
      g_clear_error (&err);
    }
    *credentials = gst_spdl_aws_credentials_copy (p->current);
    return GST_SPDL_AWS_CREDENTIALS_READY;
  }
  if (p->looking_up)
    return GST_SPDL_AWS_CREDENTIALS_PENDING;
  /* none, or expired: asked again once the last failure is 30 s old */
  if (p->failure == NULL
      || g_get_monotonic_time () - p->failed_at >= FAILURE_RETRY_US) {
    if (start_lookup (p, error))
      return GST_SPDL_AWS_CREDENTIALS_PENDING;
    return GST_SPDL_AWS_CREDENTIALS_READY;
  }
  g_propagate_error (error, g_error_copy (p->failure));
  return GST_SPDL_AWS_CREDENTIALS_READY;
}

GstSpdlAwsCredentialsStatus
gst_spdl_aws_credentials_provider_try_get (GstSpdlAwsCredentialsProvider * p,
    GstSpdlAwsCredentials ** credentials, GError ** error)
{
  GstSpdlAwsCredentialsStatus status;

  g_return_val_if_fail (p != NULL, GST_SPDL_AWS_CREDENTIALS_READY);
  g_mutex_lock (&p->lock);
  status = try_get_locked (p, credentials, error);
  g_mutex_unlock (&p->lock);
  return status;
}

GstSpdlAwsCredentials *
gst_spdl_aws_credentials_provider_get (GstSpdlAwsCredentialsProvider * p,
    GError ** error)
{
  GstSpdlAwsCredentials *c = NULL;

  g_return_val_if_fail (p != NULL, NULL);
  g_mutex_lock (&p->lock);
  while (try_get_locked (p, &c, error) == GST_SPDL_AWS_CREDENTIALS_PENDING) {
    while (p->looking_up)
      g_cond_wait (&p->cond, &p->lock);
  }
  g_mutex_unlock (&p->lock);
  return c;
}
