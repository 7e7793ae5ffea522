/* error.c - string tables for the error codes (generated from GX_ERRNO_MAP)
 * and the message buffer helpers. */
#include "gpuxray/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *gx_strerror(int code)
{
    switch (code) {
#define GX_ERR_TEXT(name, value, text) \
    case value:                        \
        return text;
        GX_ERRNO_MAP(GX_ERR_TEXT)
#undef GX_ERR_TEXT
    default:
        return "unknown error";
    }
}

const char *gx_errname(int code)
{
    switch (code) {
#define GX_ERR_NAME(name, value, text) \
    case value:                        \
        return "GX_" #name;
        GX_ERRNO_MAP(GX_ERR_NAME)
#undef GX_ERR_NAME
    default:
        return "GX_UNKNOWN";
    }
}

int gx_fail(gx_msg *msg, int code, const char *fmt, ...)
{
    if (msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg->text, sizeof msg->text, fmt, ap);
        va_end(ap);
    }
    return code;
}

void gx_msg_clear(gx_msg *msg)
{
    if (msg)
        msg->text[0] = '\0';
}
