/*
 * cmd_webhook_cert.c — `kcache webhook-cert --dir D [--dns NAME]... [--ip IP]... [--days N]
 * [--reuse-ca]`: development certificates for a webhook server (kc_webhook_cert_generate): a CA
 * and a serving certificate for the names given, written as D/ca.crt, D/ca.key, D/tls.crt and
 * D/tls.key (keys 0600), and the caBundle (base64 of ca.crt) printed on stdout for a webhook
 * configuration's clientConfig.caBundle. --reuse-ca keeps an existing CA in D and issues a new
 * leaf under it: a rotation that needs no caBundle change.
 */
#include "cli.h"

#include "kcache/webhook.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 64

static int usage(void)
{
    printf("Usage: kcache webhook-cert --dir DIR [--dns NAME]... [--ip IP]... [--days N] "
           "[--reuse-ca]\n\n"
           "Makes a CA and a serving certificate for a webhook server (EC P-256) and writes\n"
           "DIR/ca.crt, DIR/ca.key, DIR/tls.crt and DIR/tls.key (keys mode 0600, each file\n"
           "replaced atomically). Prints the caBundle (base64 of ca.crt) for the webhook\n"
           "configuration's clientConfig.caBundle.\n\n"
           "  --dir DIR     where to write (must exist)\n"
           "  --dns NAME    a subjectAltName DNS entry (repeatable), e.g. svc.ns.svc\n"
           "  --ip IP       a subjectAltName IP entry (repeatable), e.g. 127.0.0.1\n"
           "  --days N      validity in days (default 365)\n"
           "  --reuse-ca    keep DIR/ca.crt and DIR/ca.key when present: a new leaf, same CA\n\n"
           "At least one --dns or --ip is required.\n");
    return 0;
}

static int cmd_webhook_cert(int argc, char **argv)
{
    enum { O_DIR = KC_CLI_LONG_ONLY, O_DNS, O_IP, O_DAYS, O_REUSE };
    static const struct option longopts[] = {{"dir", required_argument, NULL, O_DIR},
                                             {"dns", required_argument, NULL, O_DNS},
                                             {"ip", required_argument, NULL, O_IP},
                                             {"days", required_argument, NULL, O_DAYS},
                                             {"reuse-ca", no_argument, NULL, O_REUSE},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    static const char optstring[] = ":h";
    const char *dns[MAX_NAMES], *ips[MAX_NAMES];
    kc_webhook_cert_opts o = {.dns_names = dns, .ip_addresses = ips};
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (ch) {
        case 'h':
            return usage();
        case O_DIR:
            o.dir = optarg;
            break;
        case O_DNS:
        case O_IP:
            if ((ch == O_DNS ? o.n_dns_names : o.n_ip_addresses) >= MAX_NAMES)
                return kc__cli_usage_error("webhook-cert", "%s: at most %d entries",
                                           ch == O_DNS ? "--dns" : "--ip", MAX_NAMES);
            if (ch == O_DNS)
                dns[o.n_dns_names++] = optarg;
            else
                ips[o.n_ip_addresses++] = optarg;
            break;
        case O_DAYS: {
            char *end;
            long d = strtol(optarg, &end, 10);
            if (*end || d <= 0 || d > 36500)
                return kc__cli_usage_error("webhook-cert", "--days: expected 1 to 36500, got '%s'",
                                           optarg);
            o.valid_days = (int)d;
            break;
        }
        case O_REUSE:
            o.reuse_ca = true;
            break;
        default:
            return kc__cli_getopt_error("webhook-cert", ch, optstring, argv);
        }
    }
    if (optind < argc)
        return kc__cli_usage_error("webhook-cert", "%s: unexpected argument", argv[optind]);
    if (!o.dir)
        return kc__cli_usage_error("webhook-cert", "--dir: missing");
    if (!o.n_dns_names && !o.n_ip_addresses)
        return kc__cli_usage_error("webhook-cert", "--dns or --ip: at least one is required");
    kc_error e = KC_ERROR_INIT;
    char *bundle = NULL;
    int rc = kc_webhook_cert_generate(&o, &bundle, &e);
    if (rc) {
        fprintf(stderr, "kcache webhook-cert: %s\n", e.message ? e.message : kc_strerror(rc));
        kc_error_clear(&e);
        return rc == KC_EINVAL ? KC_CLI_EXIT_USAGE : KC_CLI_EXIT_FAIL;
    }
    printf("%s\n", bundle);
    free(bundle);
    return 0;
}

__attribute__((constructor)) static void kc__cli_reg_webhook_cert(void)
{
    kc__cli_register("webhook-cert",
                     "development CA + serving certificate for a webhook; prints "
                     "the caBundle",
                     cmd_webhook_cert);
}
