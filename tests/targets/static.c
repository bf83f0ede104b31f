/* static - a statically linked program, which no preloaded library reaches. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char *volatile p = malloc(100);

	free(p);
	printf("static ran\n");
	return 3;
}
