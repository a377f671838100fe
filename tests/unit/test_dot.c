#include "config.h"
#include "../tap.h"
int main(void){ok(1,"x");return done_testing();}
