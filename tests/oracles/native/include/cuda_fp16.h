/* Empty: export headers include it but the harness uses no half types. */
#pragma once
