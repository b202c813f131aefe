/*
 * Calls that are easy to misuse turn into compile errors (after git's banned.h): use strbuf,
 * snprintf and the parse_* helpers instead.
 */
#ifndef KOORD_BANNED_H
#define KOORD_BANNED_H

/* The headers that declare them first: included after the macros below, their inline
 * definitions (glibc's at -O2: atoi, fortified sprintf, ...) would expand them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef atoll
#define atoll(x) BANNED(atoll)
#undef system
#define system(x) BANNED(system)

#endif
