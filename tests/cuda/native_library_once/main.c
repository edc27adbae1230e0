/* Runs every scenario of scenarios.c natively, against the DSL's static runtime and standin.c. */
#include <stdio.h>

extern const char *const scenario_names[];
extern const int scenario_devices[];
extern const int scenario_count;
int scenario(int which);
void standin_reset(int devices);

int main(void) {
    int which;
    setvbuf(stdout, 0, _IONBF, 0);
    for (which = 0; which < scenario_count; which++) {
        printf("scenario %d %s: devices %d\n", which, scenario_names[which], scenario_devices[which]);
        standin_reset(scenario_devices[which]);
        scenario(which);
    }
    return 0;
}
