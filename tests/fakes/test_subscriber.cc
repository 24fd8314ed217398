extern "C" int InitializeInjection(void){return 1;}
